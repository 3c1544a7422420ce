"""The agent loop: inbox, driver, turns and steps, hooks, tool scheduling,
cancellation, recovery, compaction (spec: shared/spec/agent-loop.md).

Public API::

    agent = Agent(session, providers={"name": provider}, tools=ToolRegistry([...]), options=AgentOptions(...))
    agent.followup(content) / steer(content) / inject(content) -> message dict (has "id")
    agent.remove(message_id) -> bool
    agent.cancel("user" | "parent" | "hook" | "disposed" | {...}, keep_inbox=False)
    await agent.when_idle(); await agent.dispose(); await agent.compact_now()
    agent.on(name, fn) -> unsubscribe      live events (agent/status, agent/inbox/*, agent/error,
                                           tools/progress, tools/result, agent/disposed)
    agent.session.subscribe(fn)            durable events, after commit, in seq order
    agent.hooks.register(name, fn)         the extension points of spec §8 (see hooks.py)

Where this implementation chooses differently from, or adds to, the spec:

- `dispose()` cancels with cause `disposed` but keeps the inbox (keep_inbox):
  pending messages stay durable and are back after a resume, instead of
  being discarded by a server shutdown. They never run during disposal.
- A cancelled tool body, model stream or hook listener that does not settle
  within `cancel_grace_s` (default 2 s) is abandoned: its task is cancelled
  and no longer awaited; a tool's result is recorded as an error
  `TOOL_ABANDONED` with `abandoned: true`. A stuck tool never wedges a session.
- Besides the spec's checkpoints (each pre-step, before each model dispatch,
  before each tool body) the log is flushed when the agent goes idle.
- Loading does not refuse unknown event types (plugins may add their own);
  a bad line is reported as CorruptSessionError(path, line).
- Surface operations are `"append"` or `{"kind": "replace", "start", "end"}`.
"""

from agent_lsp.agent.agent import Agent, AgentBusyError, AgentDisposedError
from agent_lsp.agent.compaction import CompactionError
from agent_lsp.agent.hooks import HookBus
from agent_lsp.agent.invariants import log_violations
from agent_lsp.agent.options import AgentOptions, CompactionOptions, RetryOptions
from agent_lsp.agent.registry import ToolRegistry
from agent_lsp.agent.signal import Aborted, CancelToken
from agent_lsp.store.session import Event, Session

__all__ = [
    "Aborted",
    "Agent",
    "AgentBusyError",
    "AgentDisposedError",
    "AgentOptions",
    "CancelToken",
    "CompactionError",
    "CompactionOptions",
    "Event",
    "HookBus",
    "RetryOptions",
    "Session",
    "ToolRegistry",
    "log_violations",
]
