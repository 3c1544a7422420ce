"""Session titles written by the model, and renames.

A session is titled with the first thing the user wrote in it (the store's
listing does that). With `sessions.titles = "model"`, when a session's first
turn ends its model (or `sessions.titleModel` of the same provider) is asked
for a title of at most `TITLE_WORDS` words, in a small request of its own,
in the background: the turn has ended, the next one does not wait for it,
and a failure (an error, a timeout, an empty answer) only leaves the
first-message title, with one line in the log. The title is a durable
`session/title` event, so the listing and a replay show it;
`agent/session/rename` appends one too (`source: "user"`), and the last one
counts. A session the user titled (`agent/session/new {title}`) or renamed is
not retitled by the model.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable

from agent_lsp.agent.events import LiveEvent
from agent_lsp.llm.types import ModelRequest
from agent_lsp.store import SessionLockedError
from agent_lsp.store.event import TITLE_EVENT
from agent_lsp.store.message_text import assistant_text, searchable_text

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.config import SessionSettings
    from agent_lsp.store import Session
    from agent_lsp.workspace.open_sessions import OpenSessions

log = logging.getLogger(__name__)

TITLE_WORDS = 8
TITLE_CHARS = 80
TITLE_TIMEOUT_S = 60.0
EXCHANGE_CHARS = 2000  # of the first message and of the first answer, in the title request
INSTRUCTION = (
    "You name conversations between a developer and a coding assistant. Answer with a title for this one: "
    f"at most {TITLE_WORDS} words saying what it is about, no quotes, no final period, nothing else."
)


class TitleError(ValueError):
    """A title that cannot be used; the message says why."""


def clean_title(text: str) -> str:
    """A model's answer as a title: its first non-empty line, without quotes,
    a "Title:" prefix or a final period, at most TITLE_WORDS words."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = line.strip().strip("*#").strip()
    if line.casefold().startswith("title:"):
        line = line[len("title:"):]
    line = line.strip().strip("\"'`“”‘’").strip().rstrip(".")
    words = line.split()[:TITLE_WORDS]
    title = " ".join(words)
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


def user_title(title: str) -> str:
    """A title the user gave, whitespace collapsed; TitleError if empty or too long."""
    flat = " ".join(title.split())
    if not flat:
        raise TitleError("title: an empty title")
    if len(flat) > 200:
        raise TitleError(f"title: {len(flat)} characters, at most 200")
    return flat


def is_titled(session: Session) -> bool:
    """The session has a title of its own: given at creation, written by the model or renamed."""
    return bool(session.meta.get("title")) or any(e.type == TITLE_EVENT for e in session.events.held())


def first_exchange(session: Session) -> tuple[str, str]:
    """What the user wrote first and the model's first answer with text."""
    said, answered = "", ""
    for event in session.events.held():
        if not said and event.type == "user/message":
            said = searchable_text(event.type, event.data) or ""
        elif said and not answered and event.type == "assistant/message":
            answered = assistant_text(event.data.get("message") or {})
        if said and answered:
            break
    return said, answered


class SessionTitles:
    """`settings()` gives the `sessions` settings in force."""

    def __init__(self, sessions: OpenSessions, settings: Callable[[], SessionSettings]):
        self.sessions = sessions
        self.settings = settings
        self._tasks: set[asyncio.Task] = set()

    def attach(self, agent: Agent) -> None:
        """Ask for a title when this session's first turn ends (if titles come from the model)."""
        def on_event(event: Any) -> None:
            if (not isinstance(event, LiveEvent) and event.type == "turn/end" and event.data.get("turn") == 1
                    and self.settings().titles == "model" and not is_titled(agent.session)):
                task = asyncio.ensure_future(self._title(agent))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

        agent.subscribe(on_event)

    def rename(self, agent: Agent, title: str) -> str:
        """The user's title for the session from now on (TitleError for an empty one)."""
        title = user_title(title)
        self._append(agent.session, {"title": title, "source": "user"})
        return title

    async def _title(self, agent: Agent) -> None:
        said, answered = first_exchange(agent.session)
        if not said.strip():
            return
        model = self.settings().title_model or agent.options.model
        provider = agent.providers.get(agent.options.provider)
        exchange = f"Developer: {said[:EXCHANGE_CHARS]}"
        if answered:
            exchange += f"\n\nAssistant: {answered[:EXCHANGE_CHARS]}"
        request = ModelRequest(
            provider=agent.options.provider, model=model, system=INSTRUCTION,
            messages=({"role": "user", "id": "title", "source": "user", "content": [{"type": "text", "text": exchange}]},),
            max_tokens=64, session_id=agent.session_id, options={"purpose": "session-title"},
        )
        try:
            if provider is None:
                raise TitleError(f"no provider {agent.options.provider!r}")
            text, usage = await asyncio.wait_for(_ask(provider, request), TITLE_TIMEOUT_S)
            title = clean_title(text)
            if not title:
                raise TitleError("the model answered with no title")
        except Exception as error:  # LlmError, TitleError, a timeout, or a bug: the title only, never the session
            log.warning("session %s keeps its first-message title: the title request to %s failed: %s",
                        agent.session_id, model, str(error) or type(error).__name__)
            return
        data: dict[str, Any] = {"title": title, "source": "model", "model": model}
        if usage:
            data["usage"] = usage
        try:
            # its agent may have been retired meanwhile (new settings): the log is still there
            session = agent.session if not agent.session.closed else self.sessions.session_log(agent.session_id)
        except (OSError, SessionLockedError) as error:  # deleted, or open in another server now
            log.info("session %s: the model's title is dropped: %s", agent.session_id, error)
            return
        if not is_titled(session):  # renamed meanwhile: the user's title stays
            self._append(session, data)

    @staticmethod
    def _append(session: Session, data: dict[str, Any]) -> None:
        session.append(TITLE_EVENT, data)
        try:
            session.flush()  # the listing reads the file
        except OSError:
            log.exception("recording the title of %s", session.id)

    async def close(self) -> None:
        """Stop the title requests under way (the server is closing)."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


async def _ask(provider: Any, request: ModelRequest) -> tuple[str, dict[str, Any] | None]:
    """The text of one model answer and its usage; LlmError for a failed one."""
    text: list[str] = []
    usage = None
    async for chunk in provider.stream(request):
        kind = chunk.get("type")
        if kind == "text-delta":
            text.append(chunk.get("text", ""))
        elif kind == "usage":
            usage = chunk.get("usage")
        elif kind == "finish":
            failure = chunk.get("failure")
            if chunk.get("kind") == "error" and failure:
                raise TitleError(failure.get("message") or failure.get("code") or "the model failed")
            break
    return "".join(text), usage
