"""Open documents: the agent reads what the editor shows, unsaved changes included."""

from __future__ import annotations

from lsprotocol import types

from agent_lsp.lsp.language_server import AgentLanguageServer, uri_to_path


def register(server: AgentLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(ls: AgentLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        path = uri_to_path(doc.uri)
        if path is not None:
            ls.documents.open(path, doc.text, doc.version, doc.language_id, uri=doc.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: AgentLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        # pygls has applied the change (in the negotiated encoding) to its copy: take its text.
        path = uri_to_path(params.text_document.uri)
        if path is not None:
            text = ls.workspace.get_text_document(params.text_document.uri).source
            ls.documents.change(path, params.text_document.version, [(None, text)])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: AgentLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is not None:
            ls.documents.close(path)
