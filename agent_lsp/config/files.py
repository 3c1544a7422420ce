"""Where settings files live (the platform's config and data folders) and
reading one TOML settings file as a layer."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any, Mapping

from agent_lsp.config.checks import Problem


APP_DIR_NAME = "agent-lsp"


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    if sys.platform == "win32":
        return Path(env.get("APPDATA") or Path.home() / "AppData" / "Roaming") / APP_DIR_NAME
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP_DIR_NAME
    return Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config") / APP_DIR_NAME


def data_dir(env: Mapping[str, str] = os.environ) -> Path:
    if sys.platform == "win32":
        return Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / APP_DIR_NAME
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP_DIR_NAME
    return Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / APP_DIR_NAME


def user_config_path(env: Mapping[str, str] = os.environ) -> Path:
    explicit = env.get("AGENT_LSP_CONFIG")
    return Path(explicit) if explicit else config_dir(env) / "config.toml"


def read_config_file(path: Path, *, required: bool = False) -> tuple[dict[str, Any], list[str]]:
    """The file layer; a missing file is an empty layer (a problem when the user
    named it), an unreadable or malformed one a problem."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle), []
    except FileNotFoundError:
        return {}, [Problem(f"AGENT_LSP_CONFIG names {path}, which does not exist")] if required else []
    except tomllib.TOMLDecodeError as error:
        return {}, [Problem(f"config file {path} is not valid TOML: {error}; none of it applies")]
    except OSError as error:
        return {}, [Problem(f"config file {path} cannot be read: {error.strerror or error}")]
