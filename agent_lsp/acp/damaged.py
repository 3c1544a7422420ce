"""A damaged session file over ACP, as the LSP face shows it: what comes
before the damage is replayed read-only with a warning naming the file and
the line; a file with nothing readable is a coded error naming them. Prompts
to it are refused with the same error (acp/folders.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from acp import RequestError, update_agent_message_text, update_agent_thought_text

from agent_lsp.acp.updates import UpdateMapper, text_delta
from agent_lsp.store import CorruptSessionError
from agent_lsp.store.damaged import describe

if TYPE_CHECKING:
    from agent_lsp.workspace.host import WorkspaceHost

SESSION_DAMAGED_CODE = -32012  # the LSP face's code for the same refusal (docs/protocol.md)


def damaged(session_id: str, error: CorruptSessionError) -> RequestError:
    return RequestError(SESSION_DAMAGED_CODE, describe(error),
                        {"sessionId": session_id, "file": error.path.name, "line": error.line})


def warning(problem: str) -> str:
    return f"agent-lsp: {problem}; showing what comes before it, read-only"


async def replay_damaged(host: WorkspaceHost, session_id: str, send: Callable[[Any], Awaitable[None]]) -> str:
    """Send the updates of the events before the damage, then the warning; the
    problem. Nothing readable: the coded error."""
    try:
        snapshot = host.damaged_snapshot(session_id)
    except CorruptSessionError as error:
        raise damaged(session_id, error) from None
    problem = snapshot.problem or f"session file {session_id}.jsonl is damaged"
    mapper = UpdateMapper(host.root)
    text: tuple[bool, list[str]] | None = None  # consecutive deltas of one kind, sent as one chunk

    async def flush_text() -> None:
        nonlocal text
        if text is not None:
            joined = "".join(text[1])
            await send(update_agent_thought_text(joined) if text[0] else update_agent_message_text(joined))
            text = None

    for event in snapshot.events:
        delta = text_delta(event)
        if delta is not None:
            if text is not None and text[0] == delta[0]:
                text[1].append(delta[1])
            else:
                await flush_text()
                text = (delta[0], [delta[1]])
            continue
        await flush_text()
        for update in mapper.updates(event, replay=True):
            await send(update)
    await flush_text()
    await send(update_agent_message_text(f"\n\n{warning(problem)}\n"))
    return problem
