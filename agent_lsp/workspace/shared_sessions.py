"""The live sessions of the agent host's windows: a session open in one
window is followed, live, by every other window that opens it.

On the agent host (`agent_lsp.daemon`) each window keeps its own folders'
hosts, settings and environment. A window that addresses a session another
window has open does not get it read-only: it *follows* it. Its relay
subscribes to the live agent (the same events, in the same order and with
the same seqs, as the window that opened it), and its requests (followup,
steer, cancel, the queue, a load or replay) reach that agent. The agent keeps
the settings and keys of the window that opened the session.

A window that leaves never ends a running turn: its hosts where a turn runs
stay open, their editor switched (`agent_lsp.workspace.window_editor`) to a
window that follows that session (its edits and questions go there from then
on), or to none (edits to disk, questions wait for a window). Such a host
closes as soon as its turns have ended; a window that followed its sessions
then opens them in its own host at its next request, with its own settings
and keys, and streams on from the seq it had seen.

One object per host process; the faces know windows only by an id and two
callables (`Window`), never each other.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost

log = logging.getLogger(__name__)


@dataclass
class Window:
    """What the registry needs of a window: how to stream an agent's events to
    it (returns the unsubscribe) and its editor port."""

    id: str
    attach: Callable[["Agent"], Callable[[], None]]
    editor: Any
    following: dict[str, tuple["Agent", Callable[[], None]]] = field(default_factory=dict)  # by session id


class SharedSessions:
    def __init__(self) -> None:
        self.windows: dict[str, Window] = {}
        self.hosts: dict[WorkspaceHost, str | None] = {}  # each host's window (None: it left; the host is kept)
        self._closing: set[asyncio.Task] = set()

    # --------------------------------------------------------------- windows

    def add_window(self, window: Window) -> None:
        self.windows[window.id] = window

    def join(self, host: WorkspaceHost, window_id: str) -> None:
        self.hosts[host] = window_id

    def leave(self, host: WorkspaceHost) -> None:
        """The window closed this folder itself (removed from its workspace)."""
        self.hosts.pop(host, None)

    def followers(self, session_id: str) -> list[Window]:
        return [w for w in self.windows.values() if session_id in w.following]

    # ------------------------------------------------------------- following

    def owner(self, host: WorkspaceHost, session_id: str) -> WorkspaceHost | None:
        """The other host of this process that has the session live (over the
        same sessions directory as `host`), if any."""
        directory = host.store.directory.resolve()
        for other in self.hosts:
            if other is not host and session_id in other.agents and other.store.directory.resolve() == directory:
                return other
        return None

    def follow(self, window_id: str, agent: Agent) -> None:
        """Stream the agent's events to this window too (once; again after the
        agent was rebuilt for the same session)."""
        window = self.windows[window_id]
        held = window.following.get(agent.session_id)
        if held is not None and held[0] is agent:
            return
        if held is not None:
            held[1]()
        window.following[agent.session_id] = (agent, window.attach(agent))

    def built(self, agent: Agent) -> None:
        """A host built an agent: the windows that follow its session follow it."""
        for window in self.followers(agent.session_id):
            self.follow(window.id, agent)

    # ----------------------------------------------------------------- leaving

    def window_left(self, window_id: str, hosts: list[WorkspaceHost]) -> list[WorkspaceHost]:
        """The window is gone: it follows nothing any more; of its hosts, those
        to close now (a host where a turn runs is kept until the turn ends)."""
        window = self.windows.pop(window_id, None)
        if window is not None:
            for _, unsubscribe in window.following.values():
                unsubscribe()
            window.following.clear()
        mine = set(hosts)
        for host in hosts:
            self.hosts[host] = None
        for host, owner in list(self.hosts.items()):
            # its own hosts, and kept ones whose edits went to this window
            if owner is None and (host in mine or (window is not None and getattr(host.editor, "target", None) is window.editor)):
                if not self._keep(host) and host in mine:
                    self.hosts.pop(host, None)
                    self.unfollow_closed(host)
        self.reap()  # kept ones whose turn ended meanwhile
        return [host for host in hosts if host not in self.hosts]

    def _keep(self, host: WorkspaceHost) -> bool:
        """Whether a host whose window left is kept: while a turn of it runs, its
        edits and questions going to a window that follows that session (or to nobody)."""
        running = [a for a in host.agents.values() if a.status != "idle"]
        if not running:
            return False
        followers = [w for a in running for w in self.followers(a.session_id)]
        switch = getattr(host.editor, "switch", None)
        if switch is not None:
            switch(followers[0].editor if followers else None)
        for agent in running:
            agent.subscribe(self._on_status)
        return True

    def _on_status(self, event: Any) -> None:
        if getattr(event, "type", None) == "agent/status" and event.data.get("status") == "idle":
            asyncio.get_running_loop().call_soon(self.reap)

    def reap(self) -> None:
        """Close the kept hosts where nothing runs any more; the windows that
        followed their sessions open them in their own hosts at their next request."""
        for host, owner in list(self.hosts.items()):
            if owner is not None or any(a.status != "idle" for a in host.agents.values()):
                continue
            self.hosts.pop(host, None)
            self.unfollow_closed(host)
            task = asyncio.ensure_future(host.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
            log.info("closed %s: its window left and its turns ended", host.root)

    def unfollow_closed(self, host: WorkspaceHost) -> None:
        """The windows following the host's sessions stop: the host closes."""
        for sid in list(host.agents):
            for window in self.followers(sid):
                _, unsubscribe = window.following.pop(sid)
                unsubscribe()
