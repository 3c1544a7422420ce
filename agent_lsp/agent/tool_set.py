"""Which tools a request offers: all of them, or a small set for small context windows.

Every offered tool's schema is sent with every request. At a window of a few
thousand tokens (a local model) the full set would take a large share of
the window before the conversation starts, so below `SMALL_WINDOW` the
`"auto"` choice offers `SMALL_SET` only: read, edit, search, run, and the
language servers. `"full"` and `"small"` choose one set whatever the window.
The choice is made per step from the window of the route the step goes to
(agent/context_window.py), so it follows a model switch. A server still
being asked for its window is waited for (a choice that changed at the next
step would void the server's prompt cache), but only a moment
(context_window.py's `PROBE_WAIT_S`, shared with compaction): a server
slower than that gets the stand-in window's set (the full one) at its first
step and the set of its real window from the step after its answer. A
window nobody knows gets the full set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Sequence

from agent_lsp.agent.context_window import PROBE_WAIT_S

if TYPE_CHECKING:
    from agent_lsp.agent.handle import AgentHandle

ToolSetChoice = Literal["auto", "full", "small"]
SMALL_WINDOW = 8192  # windows below this get the small set under "auto"
SMALL_SET = ("read_file", "edit_file", "grep", "run_command", "language")


def chosen_set(choice: str, window: int | None) -> str:
    """"small" or "full" for a `choice` and the route's window (None: unknown)."""
    if choice in ("small", "full"):
        return choice
    return "small" if window is not None and window < SMALL_WINDOW else "full"


def offered(tools: Sequence[Any], which: str, also: Iterable[str] = ()) -> list[Any]:
    """The tool specs (dicts with a name) of the set `which`, in their order;
    `also` names tools the small set keeps too."""
    if which != "small":
        return list(tools)
    names = {*SMALL_SET, *also}
    return [t for t in tools if t.get("name") in names]


def attach_tool_set(agent: "AgentHandle", choice: ToolSetChoice = "auto",
                    also: Callable[[], Iterable[str]] = tuple) -> None:
    """Offer each step the tools of `choice` for its route's window; `also()`
    names tools the small set keeps at that step (the plan tool in plan mode)."""

    async def assemble(payload: dict[str, Any], next_: Callable) -> Any:
        result = await next_(payload)
        if choice == "full" or not isinstance(result, dict):
            return result
        window = None
        if choice == "auto":
            window = await _window(agent)
        which = chosen_set(choice, window)
        if which == "full":
            return result
        return {**result, "tools": offered(result.get("tools") or (), which, also())}

    agent.hooks.register("system-prompt/assemble", assemble)


async def _window(agent: "AgentHandle") -> int | None:
    """The window of the next request's route: asked of its server at the route's
    first step (a bounded wait, shared with compaction), else what is known."""
    route = agent.next_route()
    windows = getattr(getattr(agent, "compaction", None), "windows", None)
    if windows is None:
        return agent.context_window(*route)
    try:
        window, stand_in = await windows.now(route)
        if stand_in:  # the set is kept for the session (a change would void the prompt cache): worth a wait
            window, stand_in = await windows.now(route, PROBE_WAIT_S)
    except Exception:
        return None
    return None if stand_in else window
