"""Where a workspace folder's sessions are stored.

`<sessions dir>/<hash of the folder path>/`, where the sessions dir is the
`sessionsDir` setting (env AGENT_LSP_SESSIONS_DIR sets it too, through the
settings' env layer) or `<platform data dir>/agent-lsp/sessions`. A marker
file names the folder a sessions directory belongs to.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Mapping

from agent_lsp.config import Settings
from agent_lsp.config.files import data_dir
from agent_lsp.store import SessionStore

WORKSPACE_MARKER = "workspace.json"  # names the folder a sessions directory belongs to


def sessions_root(settings: Settings, env: Mapping[str, str] = os.environ) -> Path:
    if settings.sessions_dir:
        return Path(settings.sessions_dir).expanduser()
    return data_dir(env) / "sessions"


def folder_key(folder: Path) -> str:
    return hashlib.sha256(str(Path(folder).resolve()).encode("utf-8")).hexdigest()[:16]


def sessions_dir_for(folder: Path, settings: Settings, env: Mapping[str, str] = os.environ) -> Path:
    """Where the sessions of `folder` are stored."""
    return sessions_root(settings, env) / folder_key(folder)


def open_store(folder: Path, settings: Settings, env: Mapping[str, str], lock_holder: str | None = None) -> SessionStore:
    """The store of `folder`'s sessions, its directory made and marked."""
    directory = sessions_dir_for(folder, settings, env)
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / WORKSPACE_MARKER
    if not marker.exists():
        marker.write_text(json.dumps({"folder": str(folder), "uri": folder.as_uri()}) + "\n", encoding="utf-8")
    # locked: a second server on the same folder (another editor window) cannot
    # open a session this one has open (agent_lsp.store.lock), nor another window
    # of the same agent host (`lock_holder`)
    return SessionStore(directory, lock=True, lock_holder=lock_holder)
