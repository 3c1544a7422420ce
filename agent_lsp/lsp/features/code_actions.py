"""Code actions: "Fix with agent" on a diagnostic, "Ask agent about selection"
on a selection; both run the agentLsp.followup command with the code as context.
"Keep agent change" / "Undo agent change" on an agent edit's pending hunk
("edits.review": "review") run agentLsp.review.resolve.

Editors send only the diagnostics of the server they ask (and agent_lsp
publishes none), so "Fix with agent" is offered on any range too: with no
diagnostic in the request, it asks the agent to find the problem in the
selected code, or in the line of the cursor."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import capabilities
from agent_lsp.lsp.language_server import AgentLanguageServer, uri_to_path
from agent_lsp.workspace.documents import normalise_path

ASK_SELECTION_PROMPT = "Look at the selected code: explain what it does and point out any problem."
FIX_RANGE_PROMPT = "Find the problem in this code and fix it."


def register(server: AgentLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind(kind) for kind in capabilities.CODE_ACTION_KINDS]),
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
    actions: list[types.CodeAction] = review_actions(ls, uri, params.range)
    for diagnostic in params.context.diagnostics:
        line_range = types.Range(
            start=types.Position(line=diagnostic.range.start.line, character=0),
            end=types.Position(line=diagnostic.range.end.line + 1, character=0),
        )
        context = {"kind": "diagnostic", "uri": uri, "range": _range_dict(diagnostic.range),
                   "message": diagnostic.message, "text": _range_text(ls, uri, line_range)}
        action = _followup_action(f"Fix with agent: {diagnostic.message[:80]}", "Fix with agent",
                                  types.CodeActionKind.QuickFix, f"Fix this problem: {diagnostic.message}",
                                  context, workspace_uri)
        action.diagnostics = [diagnostic]
        actions.append(action)
    if not params.context.diagnostics:
        fix_range = params.range
        if fix_range.start == fix_range.end:  # the cursor: its whole line
            fix_range = types.Range(
                start=types.Position(line=fix_range.start.line, character=0),
                end=types.Position(line=fix_range.start.line + 1, character=0),
            )
        context = {"kind": "selection", "uri": uri, "range": _range_dict(fix_range), "text": _range_text(ls, uri, fix_range)}
        actions.append(_followup_action("Fix with agent", "Fix with agent", types.CodeActionKind.QuickFix,
                                        FIX_RANGE_PROMPT, context, workspace_uri))
    if params.range.start != params.range.end:
        context = {"kind": "selection", "uri": uri, "range": _range_dict(params.range),
                   "text": _range_text(ls, uri, params.range)}
        actions.append(_followup_action("Ask agent about selection", "Ask agent about selection",
                                        types.CodeActionKind.Refactor, ASK_SELECTION_PROMPT, context, workspace_uri))
    return actions


def review_actions(ls: AgentLanguageServer, uri: str, range_: types.Range) -> list[types.CodeAction]:
    """Keep / Undo for the agent's pending hunks the range touches ("edits.review": "review"),
    and for all of the document's when it has more than one."""
    path = uri_to_path(uri)
    placed_hunks = ls.service.pending_hunks(None, normalise_path(path)) if path is not None else []
    actions = []
    for placed in placed_hunks:
        first, last = placed.start, max(placed.start, placed.end - 1)
        if first <= range_.end.line and range_.start.line <= last:
            hunk = placed.hunk
            for action, title in (("keep", "Keep agent change"), ("undo", "Undo agent change")):
                actions.append(_resolve_action(title, {"sessionId": hunk.session_id, "hunkId": hunk.hunk_id, "action": action}))
    hunks = [placed.hunk for placed in placed_hunks]
    sessions = list(dict.fromkeys(hunk.session_id for hunk in hunks))
    if len(hunks) > 1 and len(sessions) == 1:
        for action, title in (("keep", "Keep all agent changes in this file"), ("undo", "Undo all agent changes in this file")):
            actions.append(_resolve_action(title, {"sessionId": sessions[0], "uri": uri, "action": action}))
    return actions


def _resolve_action(title: str, argument: dict[str, Any]) -> types.CodeAction:
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                            command=types.Command(title=title, command=capabilities.REVIEW_RESOLVE, arguments=[argument]))


def _followup_action(title: str, command_title: str, kind: str, prompt: str, context: dict[str, Any],
                     workspace_uri: str | None) -> types.CodeAction:
    """A code action whose command asks the agent `prompt` with `context` attached."""
    argument: dict[str, Any] = {"content": prompt, "context": [context]}
    if workspace_uri:
        argument["workspaceUri"] = workspace_uri
    return types.CodeAction(title=title, kind=kind,
                            command=types.Command(title=command_title, command=capabilities.FOLLOWUP, arguments=[argument]))


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
