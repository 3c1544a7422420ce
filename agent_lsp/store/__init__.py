"""Append-only JSONL session logs, crash repair on load, listing."""

from agent_lsp.store.session import Event, JsonlWriter, Session
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.store.store import CorruptSessionError, SessionStore, SessionSummary

__all__ = ["CorruptSessionError", "Event", "JsonlWriter", "Session", "SessionLockedError", "SessionStore", "SessionSummary"]
