"""Code actions: "Fix with agent" on a diagnostic, "Ask agent about selection"
on a selection; both run the agentLsp.followup command with the code as context.

Editors send only the diagnostics of the server they ask (and agent_lsp
publishes none), so "Fix with agent" is offered on any range too: with no
diagnostic in the request, it asks the agent to find the problem in the
selected code, or in the line of the cursor."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp.language_server import AgentLanguageServer, uri_to_path

ASK_SELECTION_PROMPT = "Look at the selected code: explain what it does and point out any problem."
FIX_RANGE_PROMPT = "Find the problem in this code and fix it."


def register(server: AgentLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor]),
    )
    def code_actions(ls: AgentLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return build_code_actions(ls, params)


def build_code_actions(ls: AgentLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    path = uri_to_path(uri)
    workspace_uri = None
    if path is not None:
        try:
            workspace_uri = ls.host_for_uri(uri).uri
        except JsonRpcInvalidParams:
            workspace_uri = None
    actions: list[types.CodeAction] = []
    for diagnostic in params.context.diagnostics:
        line_range = types.Range(
            start=types.Position(line=diagnostic.range.start.line, character=0),
            end=types.Position(line=diagnostic.range.end.line + 1, character=0),
        )
        argument = {
            "content": f"Fix this problem: {diagnostic.message}",
            "context": [
                {
                    "kind": "diagnostic",
                    "uri": uri,
                    "range": _range_dict(diagnostic.range),
                    "message": diagnostic.message,
                    "text": _range_text(ls, uri, line_range),
                }
            ],
        }
        if workspace_uri:
            argument["workspaceUri"] = workspace_uri
        actions.append(
            types.CodeAction(
                title=f"Fix with agent: {diagnostic.message[:80]}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(title="Fix with agent", command="agentLsp.followup", arguments=[argument]),
            )
        )
    if not params.context.diagnostics:
        fix_range = params.range
        if fix_range.start == fix_range.end:  # the cursor: its whole line
            fix_range = types.Range(
                start=types.Position(line=fix_range.start.line, character=0),
                end=types.Position(line=fix_range.start.line + 1, character=0),
            )
        argument = {
            "content": FIX_RANGE_PROMPT,
            "context": [{"kind": "selection", "uri": uri, "range": _range_dict(fix_range), "text": _range_text(ls, uri, fix_range)}],
        }
        if workspace_uri:
            argument["workspaceUri"] = workspace_uri
        actions.append(
            types.CodeAction(
                title="Fix with agent",
                kind=types.CodeActionKind.QuickFix,
                command=types.Command(title="Fix with agent", command="agentLsp.followup", arguments=[argument]),
            )
        )
    if params.range.start != params.range.end:
        argument = {
            "content": ASK_SELECTION_PROMPT,
            "context": [{"kind": "selection", "uri": uri, "range": _range_dict(params.range), "text": _range_text(ls, uri, params.range)}],
        }
        if workspace_uri:
            argument["workspaceUri"] = workspace_uri
        actions.append(
            types.CodeAction(
                title="Ask agent about selection",
                kind=types.CodeActionKind.Refactor,
                command=types.Command(title="Ask agent about selection", command="agentLsp.followup", arguments=[argument]),
            )
        )
    return actions


def _range_text(ls: AgentLanguageServer, uri: str, range_: types.Range) -> str:
    try:
        doc = ls.workspace.get_text_document(uri)
        return doc.source[doc.offset_at_position(range_.start) : doc.offset_at_position(range_.end)]
    except Exception:
        return ""


def _range_dict(range_: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": range_.start.line, "character": range_.start.character},
        "end": {"line": range_.end.line, "character": range_.end.character},
    }
