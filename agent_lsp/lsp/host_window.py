"""This server as one window of the agent host: its part of the host's
shared live sessions (`agent_lsp.workspace.shared_sessions`).

The server holds one `HostWindow` when it is a connection of the agent host
(None when the process serves one window): its folders' hosts get an editor
port that outlives the window (`WindowEditor`), each agent they build is also
followed by the other windows that follow its session, a session another
window has open is followed instead of refused, and when the window leaves,
the registry decides which of its hosts close now.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from agent_lsp.workspace.shared_sessions import SharedSessions, Window
from agent_lsp.workspace.window_editor import WindowEditor

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost


class HostWindow:
    def __init__(self, shared: SharedSessions, window_id: str, attach: Callable[["Agent"], Callable[[], None]],
                 editor: Any, presence: Callable[[str, int], None]):
        self.shared = shared
        self.id = window_id
        self.editor = editor
        self._own: list[Callable[[], None]] = []  # this window's subscriptions to its hosts' agents
        shared.add_window(Window(window_id, attach, editor, presence))

    def editor_for(self, root: Path) -> WindowEditor:
        """The editor port of a folder's host: this window's while it is there."""
        return WindowEditor(self.editor, [root])

    def joined(self, host: WorkspaceHost) -> None:
        """A host of this window, built by it or handed over from the early phase:
        its editor port is this window's, its questions asked in the windows
        following the session too."""
        editor = host.editor
        if isinstance(editor, WindowEditor):
            editor.switch(self.editor)
            editor.others = self._followers_editors
        self.shared.join(host, self.id)

    def _followers_editors(self, session_id: str | None) -> list[Any]:
        return [window.editor for window in self.shared.followers(session_id)] if session_id else []

    def own(self, agent: Agent, unsubscribe: Callable[[], None]) -> None:
        """An agent of this window's hosts streams to it until the window leaves."""
        self._own.append(unsubscribe)

    def built(self, agent: Agent) -> None:
        self.shared.built(agent)

    def follow(self, host: WorkspaceHost, session_id: str) -> tuple[WorkspaceHost, Agent] | None:
        """The session live in another window of the host, now followed by this
        one; None when no window has it (another process does)."""
        owner = self.shared.owner(host, session_id)
        if owner is None:
            return None
        agent = owner.agents[session_id]
        self.shared.follow(self.id, agent)
        return owner, agent

    def left(self, hosts: list[WorkspaceHost]) -> list[WorkspaceHost]:
        """This window is gone (nothing streams to it any more): of its hosts, those to close now."""
        for unsubscribe in self._own:
            unsubscribe()
        self._own.clear()
        return self.shared.window_left(self.id, hosts)

    def removed(self, host: WorkspaceHost) -> None:
        self.shared.leave(host)
