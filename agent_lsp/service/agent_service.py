"""`AgentService`: the operations both faces offer on a session's agent, one method each.

    followup        a message for the next turn (a new session, or the folder's
                    current one, when none is named); capability files are read
                    again first and `@server:uri` mentions attached
    steer           a message for the running turn's next step (it starts a
                    turn when none runs, or, for the ACP steering extension,
                    is queued as a followup then)
    cancel          the running turn ends; the queue is dropped unless kept
    remove_queued   a queued message taken out
    pending_hunks   the edits waiting for the user in review mode
    export_session  a session as Markdown (agent/session/export)

Every message that may start a turn reads the folder's changed capability
files first (`capability_refresh.refresh`), before its agent is looked up:
new hooks or rules rebuild an idle agent, and the lookup then gives the new
one.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from agent_lsp.service import images
from agent_lsp.service.capability_refresh import refresh
from agent_lsp.service.directory import SessionDirectory
from agent_lsp.service.messages import Message, with_attachments
from agent_lsp.service.requests import SessionExportParams, SessionExportResult
from agent_lsp.views.markdown import session_markdown, session_title

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.edit_review import PlacedHunk
    from agent_lsp.workspace.host import WorkspaceHost


@dataclass(frozen=True)
class Queued:
    """A message the agent took: the session's agent, the message's id, and how it
    was delivered ("followup": for the next turn; "steer": for the running turn)."""

    agent: Agent
    message_id: str
    delivery: str = "followup"

    @property
    def session_id(self) -> str:
        return self.agent.session_id


class AgentService:
    def __init__(self, directory: SessionDirectory):
        self.directory = directory

    # ------------------------------------------------------------- messages

    async def followup(
        self,
        message: Message,
        *,
        session_id: str | None = None,
        workspace_uri: str | None = None,
        use_current: bool = False,
        mentions: bool = True,
        message_id: str | None = None,
        after_s: float = 0.0,
        before_queue: Callable[[Agent], None] | None = None,
    ) -> Queued:
        """Queue a followup for the session's next turn. No session: the folder's current
        one (`use_current`, for commands) or a new one. `mentions`: attach what `@server:uri`
        names (the user's own text; not the text of a skill or an MCP prompt). `message_id`:
        the id to give it; `after_s`: queue it that much later (the answer goes out first);
        `before_queue`: called with the agent just before the message is queued (a face
        that waits for the turn to end registers there)."""
        host = self.turn_host(session_id, workspace_uri)
        message = images.read(message, host)
        if mentions:
            message = await with_attachments(host, message)
        if session_id is not None:
            _, agent = self.directory.agent_for(session_id)
        else:
            agent = host.current() if use_current else host.new_session()
        try:
            images.refuse_model(message, host, agent)
            message = images.stored(message, agent)
        except images.ImageProblem:
            if session_id is None and not use_current:  # the session made for this message goes too
                await host.delete_session(agent.session_id)
            raise
        if before_queue is not None:
            before_queue(agent)
        if after_s > 0:
            message_id = message_id or f"msg_{uuid.uuid4().hex[:12]}"
            asyncio.get_running_loop().call_later(after_s, _later, agent, message, message_id)
            return Queued(agent, message_id)
        queued = agent.followup(message.content, id=message_id, context=message.context, note=message.note)
        return Queued(agent, queued["id"])

    async def steer(
        self,
        message: Message,
        *,
        session_id: str | None = None,
        workspace_uri: str | None = None,
        idle_followup: bool = False,
    ) -> Queued:
        """A message for the running turn's next step; no session: the folder's current one.
        When no turn runs it starts one, or, with `idle_followup`, it is queued as a followup
        (the steering extension of ACP clients: "injected" or "startedNewTurn")."""
        host = self.turn_host(session_id, workspace_uri)
        message = images.read(message, host)
        agent = self.directory.agent_for(session_id)[1] if session_id is not None else host.current()
        images.refuse_model(message, host, agent)
        message = images.stored(message, agent)
        if idle_followup and agent.status != "running":
            return Queued(agent, agent.followup(message.content, context=message.context, note=message.note)["id"])
        return Queued(agent, agent.steer(message.content, context=message.context)["id"], "steer")

    def turn_host(self, session_id: str | None, workspace_uri: str | None) -> WorkspaceHost:
        """The host a message goes to, its capability files read again (a turn may start)."""
        if session_id is not None:
            host = self.directory.host_for_session(session_id)
        else:
            host = self.directory.host_for_uri(workspace_uri)
        refresh(host)
        return host

    # ---------------------------------------------------------------- queue

    def cancel(self, session_id: str | None = None, *, workspace_uri: str | None = None,
               keep_inbox: bool = False) -> Agent | None:
        """End the running turn (the queue dropped unless `keep_inbox`). No session: the
        folder's current one, if it has one (None: nothing to cancel)."""
        if session_id is not None:
            _, agent = self.directory.agent_for(session_id)
        else:
            host = self.directory.host_for_uri(workspace_uri)
            if host.current_session_id is None:
                return None
            agent = host.current()
        agent.cancel("user", keep_inbox=keep_inbox)
        return agent

    def remove_queued(self, session_id: str, message_id: str) -> bool:
        """Take a queued message out; False when it is not queued (taken by a turn, or unknown)."""
        _, agent = self.directory.agent_for(session_id)
        return agent.remove(message_id)

    # --------------------------------------------------------------- review

    def pending_hunks(self, session_id: str | None = None, path: Path | None = None) -> list[PlacedHunk]:
        """The pending hunks of one session (or every session), of one file (or all),
        where they are now. The folders' hosts are built if need be: after a restart
        the hunks are in the session logs, and the first list reads them back."""
        if session_id is not None:
            hosts = [self.directory.host_for_session(session_id)]
        elif path is not None:
            hosts = [host for host in (self.directory.host_holding(path),) if host is not None]
        else:
            hosts = self.directory.all_hosts()
        return [placed for host in hosts for placed in host.review.pending(session_id, path)]

    # ---------------------------------------------------------------- views

    async def export_session(self, p: SessionExportParams) -> SessionExportResult:
        _, agent = self.directory.agent_for(p.session_id)
        session = agent.session
        return SessionExportResult(title=session_title(session.events.held(), session.meta),
                                   markdown=session_markdown(p.session_id, session.events.held(), session.meta))


def _later(agent: Agent, message: Message, message_id: str) -> None:
    agent.followup(message.content, id=message_id, context=message.context, note=message.note)

