"""Append-only JSONL session logs, crash repair on load, listing."""

from agent_lsp.store.session import Event, JsonlWriter, Session
from agent_lsp.store.lock import SessionLockedError
from agent_lsp.store.file_format import CorruptSessionError
from agent_lsp.store.store import SessionStore
from agent_lsp.store.summaries import SessionSummary

__all__ = ["CorruptSessionError", "Event", "JsonlWriter", "Session", "SessionLockedError", "SessionStore", "SessionSummary"]
