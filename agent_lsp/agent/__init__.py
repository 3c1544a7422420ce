"""The agent loop: inbox, driver, turns and steps, hooks, tool scheduling,
cancellation, recovery, compaction (its rules: docs/agent-loop.md).

Public API::

    agent = Agent(session, providers={"name": provider}, tools=ToolRegistry([...]), options=AgentOptions(...),
                  subscribers=[fn, ...], start_source=None)
    agent.followup(content) / steer(content) / inject(content) -> message dict (has "id")
    agent.remove(message_id) -> bool
    agent.cancel("user" | "parent" | "hook" | "disposed" | {...}, keep_inbox=False)
    await agent.when_idle(); await agent.dispose(); await agent.compact_now()
    agent.run_maintenance(task) -> asyncio.Task     (raises AgentBusyError at once unless idle)
    agent.consumed_work(start=0) -> WorkAccount     (R2.13; also account_work(events))
    agent.subscribe(fn) -> unsubscribe     every event in one stream: durable ones (Event, after commit, in
                                           seq order) and live ones (LiveEvent: agent/status, agent/inbox/*,
                                           agent/error, agent/tool/progress, ...); models in agent/live_events.py
    agent.hooks.register(name, fn)         the extension points (R8; see hooks.py)

The turn loop and the plugins (tool scheduling, retry and fallback, compaction)
see the agent as an `AgentHandle` (handle.py): its public face, with
`emit(type, data)`, `run_hook(...)` and `last_header` for them; they never
import agent.py.

docs/agent-loop.md states the rules comments cite (R2.11, ...), lists every durable and live
event with its data fields and every hook with its payload, and explains
each design decision and its reason (among them: dispose keeps the
inbox; disposing closes the session object; a cancelled tool, model stream
or hook listener that ignores the cancel is abandoned after
`cancel_grace_s`; the log is also flushed at idle; unknown event types load).
"""

from agent_lsp.agent.accounting import WorkAccount, account_work
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
    "WorkAccount",
    "account_work",
    "log_violations",
]
