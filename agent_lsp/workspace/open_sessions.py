"""The open sessions of one workspace folder: their live agents and the store.

What the folder's helpers (review, modes, titles, sub-agents) use of its
sessions, and no more: the live agents, the store, a session's log without an
agent, an agent loaded on first use, building an agent on a new session and
taking one out. The workspace host makes the agents (`load` for a session of
the folder, `build` for one with its own tools and prompt, a sub-agent's); this
object keeps them, and retires those built with settings since replaced.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Protocol

from agent_lsp.store import CorruptSessionError

if TYPE_CHECKING:
    from agent_lsp.agent import Agent, ToolRegistry
    from agent_lsp.store import Session, SessionStore

log = logging.getLogger(__name__)


class UnknownSession(KeyError):
    def __init__(self, session_id: str):
        super().__init__(session_id)
        self.session_id = session_id

    def __str__(self) -> str:
        return f"unknown session {self.session_id}"


class BuildAgent(Protocol):
    def __call__(self, session: Session, *, tools: ToolRegistry, system_prompt: Any, model: str | None = None) -> Agent:
        """An agent on `session` with these tools and system prompt (and model), live in the folder."""


class OpenSessions:
    def __init__(
        self,
        store: SessionStore,
        *,
        load: Callable[[Session], Agent],
        build: BuildAgent,
        spawn: Callable[[Coroutine[Any, Any, Any]], None],
        read: Callable[[str], Session] | None = None,
    ):
        self.store = store
        self._read = read or store.load  # a session's log from the store (the host finishes interrupted reverts)
        # damage a load found: the session is read-only from then on, and listed with its problem
        self.damaged: dict[str, CorruptSessionError] = {}
        self.agents: dict[str, Agent] = {}  # session id -> its live agent
        self.build_agent = build
        self._load = load
        self._spawn = spawn
        self._stale: set[Agent] = set()  # running agents built with settings since replaced

    def has(self, session_id: str) -> bool:
        return session_id in self.agents or self.store.path_of(session_id).exists()

    def agent(self, session_id: str) -> Agent:
        """The live agent of a session, loading it from the store on first use.
        CorruptSessionError for a damaged one, then and on every later call."""
        if session_id in self.damaged:
            raise self.damaged[session_id]
        agent = self.agents.get(session_id)
        if agent is None:
            if not self.store.path_of(session_id).exists():
                raise UnknownSession(session_id)
            try:
                session = self._read(session_id)
            except CorruptSessionError as damage:
                self.damaged[session_id] = damage
                raise
            agent = self._load(session)
        return agent

    def session_log(self, session_id: str) -> Session:
        """The session's log, without building an agent (reverting needs no model).
        Loading takes the session's lock: SessionLockedError when another server has it."""
        live = self.agents.get(session_id)
        return live.session if live is not None else self._read(session_id)

    # ------------------------------------------------------------- retiring

    def rebuild_all(self) -> None:
        """Idle agents are retired now and rebuilt on next use; running ones when they go idle."""
        for agent in list(self.agents.values()):
            if agent.status == "idle":
                self._stale.add(agent)
                self._retire_stale(agent)
            elif agent not in self._stale:
                self._stale.add(agent)
                agent.idle_listeners.append(lambda agent=agent: self._retire_stale(agent))

    def _retire_stale(self, agent: Agent) -> None:
        """Called by an agent built with old settings when it goes idle: drop it at
        once (synchronously, so no request can reach it in between); the next
        request on its session loads the log afresh into a new agent."""
        self._stale.discard(agent)
        if self.agents.get(agent.session_id) is not agent:
            return  # already being retired (session deleted, folder closed)
        del self.agents[agent.session_id]
        agent.dispose()  # idle: nothing to wait for
        agent.session.close()  # flushed and unlocked now, not a loop iteration later
        self._spawn(retire(agent))  # closes its providers' connections

    async def retire_agent(self, agent: Agent) -> None:
        """Take an agent out (a finished sub-agent): later requests on its session
        load the log afresh."""
        if self.agents.get(agent.session_id) is agent:
            del self.agents[agent.session_id]
        self._stale.discard(agent)
        await retire(agent)

    def drop(self, session_id: str) -> None:
        """Take the session's agent out at once, if it is live (its file turned out
        damaged), cancelled; it is retired in the background."""
        agent = self.agents.pop(session_id, None)
        if agent is not None:
            agent.cancel("user")
            self._spawn(retire(agent))

    async def remove(self, session_id: str) -> None:
        """Cancel and retire the session's agent, if it is live (the session is deleted)."""
        agent = self.agents.pop(session_id, None)
        if agent is not None:
            agent.cancel("user")
            await retire(agent)

    async def close(self) -> None:
        """Cancel and retire every agent (the folder is closed)."""
        agents = list(self.agents.values())
        self.agents.clear()
        for agent in agents:
            agent.cancel("disposed")
        for agent in agents:
            await retire(agent)


async def retire(agent: Agent) -> None:
    """Dispose an agent and close its providers' connections."""
    await agent.dispose()
    agent.session.flush()
    for provider in agent.providers.values():
        close = getattr(provider, "aclose", None)
        if close is not None:
            try:
                await close()
            except Exception:
                log.exception("closing provider %s", getattr(provider, "name", provider))
