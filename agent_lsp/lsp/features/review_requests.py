"""agent/review/list and agent/review/resolve: the agent's edits that wait for
the user to keep or undo them ("edits.review": "review",
`agent_lsp.workspace.edit_review`); `agentLsp.review.resolve` is the same
resolve as a command, for the code actions of editors without a plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.lsp import capabilities
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer, uri_to_path
from agent_lsp.lsp.rpc import parse
from agent_lsp.workspace.documents import normalise_path

if TYPE_CHECKING:
    from pathlib import Path

    from agent_lsp.workspace.edit_review import PlacedHunk


async def review_list(ls: AgentLanguageServer, p: wire.ReviewListParams) -> wire.ReviewListResult:
    await ls.ready()
    hunks = ls.service.pending_hunks(p.session_id or None, path_of(p.uri))
    return wire.ReviewListResult(hunks=[hunk_info(ls, placed) for placed in hunks])


async def review_resolve(ls: AgentLanguageServer, p: wire.ReviewResolveParams) -> wire.ReviewResolveResult:
    return await resolve(ls, p)


REQUESTS = {
    "agent/review/list": review_list,
    "agent/review/resolve": review_resolve,
}


def register(server: AgentLanguageServer) -> None:
    @server.command(capabilities.REVIEW_RESOLVE)
    async def cmd_review_resolve(ls: AgentLanguageServer, *args: Any) -> dict:
        if len(args) != 1:
            raise JsonRpcInvalidParams("arguments: expected one argument, {sessionId, action, hunkId? | uri? | all?}")
        return wire.wire_dump(await resolve(ls, parse(wire.ReviewResolveParams, args[0])))


def hunk_info(ls: AgentLanguageServer, placed: PlacedHunk) -> wire.PendingHunkInfo:
    hunk = placed.hunk
    return wire.PendingHunkInfo(
        session_id=hunk.session_id, hunk_id=hunk.hunk_id, uri=ls.documents.uri_of(hunk.path),
        range=wire.Range(start=wire.Position(line=placed.start, character=0), end=wire.Position(line=placed.end, character=0)),
        turn=hunk.turn, call_id=hunk.call_id, old_text=hunk.old, new_text=hunk.new,
    )


async def resolve(ls: AgentLanguageServer, p: wire.ReviewResolveParams) -> wire.ReviewResolveResult:
    if p.hunk_id is None and p.uri is None and not p.all:
        raise JsonRpcInvalidParams("hunkId: name a hunk, a document (uri) or all: true")
    from agent_lsp.workspace.edit_review import ReviewError  # with the hosts, not at start-up

    await ls.ready()
    host = ls.host_for_session(p.session_id)
    try:
        outcome = await host.review.resolve(p.session_id, p.action, path=path_of(p.uri), hunk_id=p.hunk_id)
    except ReviewError as error:
        raise JsonRpcInvalidParams(str(error)) from None
    return wire.ReviewResolveResult(
        resolved=outcome.resolved, skipped=[wire.ReviewSkip(hunk_id=h, reason=why) for h, why in outcome.skipped])


def path_of(uri: str | None) -> Path | None:
    """The normalised path of a document URI; invalid params when it is not a file URI."""
    if uri is None:
        return None
    path = uri_to_path(uri)
    if path is None:
        raise JsonRpcInvalidParams(f"uri: not a file URI: {uri[:80]}")
    return normalise_path(path)
