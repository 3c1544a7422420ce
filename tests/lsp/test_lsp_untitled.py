"""An untitled buffer (VS Code's `untitled:Untitled-1`) is tracked while open and
forgotten when closed, without errors, also when a change arrives after the close."""

from __future__ import annotations

import sys

import pytest
from lsprotocol import types

from lsp_harness import running_server

pytestmark = pytest.mark.asyncio


async def test_closing_an_unsaved_untitled_buffer_logs_no_error(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = tmp_path / "server.log"
    command = [sys.executable, "-m", "agent_lsp", "--log-file", str(log)]
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", command=command) as editor:
        client, uri = editor.client, "untitled:Untitled-1"
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text="draft")))
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        # VS Code reverts the closed buffer's text after it closed it ("Don't Save")
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="")]))
        # a request after them is answered: the notifications were handled
        actions = await editor.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=(workspace / "a.py").as_uri()),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[])))
        assert [a.title for a in actions] == ["Fix with agent"]
    text = log.read_text()
    assert "KeyError" not in text and "server error" not in text, text[-2000:]
