"""OAuth tokens of MCP servers: one file per server URL, readable by the user only.

`TokenFile` is the SDK's `TokenStorage` (mcp.client.auth) for one server: the
tokens and the client registration the authorization server gave us. The file
is `<data dir>/mcp-oauth/<hash of the URL>.json`, mode 0600 in a 0700
directory, written whole through a temporary file so a crash never leaves half
a token. The values are registered with `agent_lsp.secrets`, so no log line
shows them; they never enter session files, notifications or a child's
environment, which never see this file.

The SDK keeps only `expires_in` of a token; the file keeps the absolute time it
expires, so a later start knows an old token has expired and lets the SDK
refresh it instead of sending it first.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from agent_lsp import secrets

log = logging.getLogger(__name__)

DIR_NAME = "mcp-oauth"


def token_path(directory: Path, url: str) -> Path:
    return directory / f"{hashlib.sha256(url.encode()).hexdigest()[:24]}.json"


class TokenFile:
    def __init__(self, directory: Path, url: str):
        self.url = url
        self.path = token_path(directory, url)

    # ---------------------------------------------------------- TokenStorage

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        data = self._read().get("tokens")
        if not data:
            return None
        expires_at = data.pop("expires_at", None)
        if expires_at is not None:
            data["expires_in"] = max(0, int(expires_at - time.time()))
        return OAuthToken.model_validate(data)

    async def set_tokens(self, tokens: Any) -> None:
        data = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            data["expires_at"] = time.time() + int(tokens.expires_in)
        self._write({**self._read(), "tokens": data})

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        data = self._read().get("client")
        return OAuthClientInformationFull.model_validate(data) if data else None

    async def set_client_info(self, client_info: Any) -> None:
        self._write({**self._read(), "client": client_info.model_dump(mode="json", exclude_none=True)})

    # ----------------------------------------------------------------- ours

    @property
    def has_tokens(self) -> bool:
        return bool(self._read().get("tokens"))

    def redirect_uri(self) -> str | None:
        """The loopback redirect URI the stored registration was made with."""
        uris = (self._read().get("client") or {}).get("redirect_uris") or []
        return str(uris[0]) if uris else None

    def forget_tokens(self) -> None:
        """Drop the tokens, keep the registration (a new sign-in reuses it)."""
        data = self._read()
        if data.pop("tokens", None) is not None:
            self._write(data)

    def forget_client(self) -> None:
        data = self._read()
        if data.pop("client", None) is not None:
            self._write(data)

    def forget(self) -> bool:
        """Delete the file: tokens and registration. Whether there was one."""
        try:
            self.path.unlink()
            return True
        except FileNotFoundError:
            return False

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            log.warning("MCP OAuth tokens in %s are unreadable (%s); signing in again", self.path, error)
            return {}
        if not isinstance(data, dict) or data.get("url") != self.url:
            return {}
        _register(data)
        return data

    def _write(self, data: dict[str, Any]) -> None:
        data = {**data, "url": self.url}
        _register(data)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump(data, file)
        os.replace(temporary, self.path)


def _register(data: dict[str, Any]) -> None:
    """Mask the token values everywhere from now on (logs, events, notifications)."""
    tokens = data.get("tokens") or {}
    client = data.get("client") or {}
    secrets.register(tokens.get("access_token"), tokens.get("refresh_token"), client.get("client_secret"))
