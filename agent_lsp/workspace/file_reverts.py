"""Undoing the agent's file changes: one turn's (turn revert), or every turn a
rewind cuts off. The files are put back through the editor (EditJournal), and
the events that say so are recorded once every file is done; the intent is
written down before the first file is touched, so a crash in between is
finished or undone at the next start (revert_intent.py). One file operation
of a session runs at a time (a revert, a rewind, an undo of reviewed changes:
`RevertIntents.lock`); the next waits for it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from agent_lsp.agent.agent import AgentBusyError
from agent_lsp.agent.rewind import REWIND_EVENT, RewindError, rewind_data
from agent_lsp.workspace.edit_journal import REVERT_EVENT, EditJournal, RevertReport, revert_event_data
from agent_lsp.workspace.revert_intent import RevertIntents
from agent_lsp.workspace.session_family import RewindOutcome

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.agent.ports import Editor
    from agent_lsp.store import Session


class FileReverts:
    def __init__(self, journal: EditJournal, intents: RevertIntents, editor: Editor,
                 session_log: Callable[[str], Session]):
        self.journal = journal
        self.intents = intents
        self.editor = editor
        self.session_log = session_log  # a session's log, without building an agent

    def _rebuilt(self, session_id: str, session: Session) -> None:
        if not self.journal.is_rebuilt(session_id):
            # the session log is the source of truth: turns (and reverts) of an earlier server run are in it
            self.journal.rebuild(session_id, session.events)

    async def revert_turn(self, session_id: str, turn: int) -> RevertReport:
        """Undo the file changes the agent made in one turn (text the user changed
        since is left alone), and record the revert in the session log
        (`turn/revert`), so the turn is not reverted twice, after a restart too."""
        async with self.intents.lock(session_id):  # one file operation of a session at a time
            session = self.session_log(session_id)
            self._rebuilt(session_id, session)
            intent = self.intents.begin_turns(session, "turn-revert", turn, [turn], self.journal)
            try:
                report = await self.journal.revert(self.editor, session_id, turn)
            except BaseException:
                self.intents.abandon(intent, self.journal, session_id)
                raise
            if session.closed:  # its agent was retired while the editor applied the revert
                session = self.session_log(session_id)
            # not model-visible (no surfaceOp); a live agent's observers (the client relay) see it
            recorded = [(REVERT_EVENT, revert_event_data(turn, report), report.reverted_at)] if report.reverted_at is not None else []
            self.intents.record(intent, session, recorded)
            return report

    async def rewind(self, agent: Agent, turn: int, *, revert_files: bool) -> RewindOutcome:
        """Cut the session's history back to before `turn` (a durable
        `session/rewind` event), and with `revert_files` revert the files the
        rewound turns changed, newest turn first. Only while the session is
        idle: RewindError otherwise, or when the turn cannot be rewound."""
        session_id = agent.session_id
        rewind_data(agent.session, turn)  # refused before anything is done
        outcome = RewindOutcome()

        async def rewind(token) -> None:
            async with self.intents.lock(session_id):  # one file operation of a session at a time
                await rewind_now()

        async def rewind_now() -> None:
            data = rewind_data(agent.session, turn)
            outcome.removed_messages = sum(
                1 for seq in data["removedSeqs"] if agent.session.events[seq].data.get("message") is not None
            )
            session = agent.session
            if not revert_files:
                session.append(REWIND_EVENT, data)
                return
            self._rebuilt(session_id, session)
            turns = list(range(session.last_turn(), turn - 1, -1))
            # the files first, the events once all are done (a crash between: revert_intent.py)
            intent = self.intents.begin_turns(session, "rewind", turn, turns, self.journal)
            recorded: list[tuple[str, dict, int | None]] = [(REWIND_EVENT, data, None)]
            try:
                for rewound in turns:
                    report = await self.journal.revert(self.editor, session_id, rewound)
                    outcome.reverts.append((rewound, report))
                    if report.reverted_at is not None:
                        recorded.append((REVERT_EVENT, revert_event_data(rewound, report), report.reverted_at))
            except BaseException:
                self.intents.abandon(intent, self.journal, session_id)
                raise
            self.intents.record(intent, session, recorded)

        try:
            await agent.run_maintenance(rewind)
        except AgentBusyError:
            raise RewindError("the session is running a turn; cancel it or wait until it ends") from None
        return outcome
