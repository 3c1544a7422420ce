"""A Streamable HTTP MCP server that requires OAuth, built with the SDK's own
server auth (mcp.server.auth), run in a thread for a test.

The server is its own authorization server, as the SDK's auth example is:
protected-resource metadata, authorization-server metadata, dynamic client
registration, `/authorize` and `/token` are the SDK's routes; `Issuer` below
is the provider behind them, in memory. Its `/authorize` consents at once (the
test's "browser" only follows the redirect), or refuses with `access_denied`
when `refuse` is set. Tokens expire after `token_lifetime_s`. The one tool is
`echo`.
"""

from __future__ import annotations

import math
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from mcp_http_server import ServedInThread


@dataclass
class Issuer:
    """The in-memory authorization server: what it registered, asked and issued."""

    token_lifetime_s: int = 3600
    refuse: bool = False
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access_tokens: dict[str, AccessToken] = field(default_factory=dict)
    refresh_tokens: dict[str, RefreshToken] = field(default_factory=dict)
    authorize_calls: int = 0
    refreshes: int = 0
    issued: list[str] = field(default_factory=list)  # every access and refresh token given out

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id or ""] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.authorize_calls += 1
        if self.refuse:
            return construct_redirect_uri(str(params.redirect_uri), error="access_denied", state=params.state)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id or "",
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(client.client_id or "", authorization_code.scopes)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh_tokens.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        self.refreshes += 1
        del self.refresh_tokens[refresh_token.token]
        return self._issue(client.client_id or "", scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access_tokens.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access_tokens.pop(token.token, None)
        self.refresh_tokens.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        expires = math.ceil(time.time() + self.token_lifetime_s)  # not before the client expects it
        self.access_tokens[access] = AccessToken(token=access, client_id=client_id, scopes=scopes, expires_at=expires)
        self.refresh_tokens[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        self.issued += [access, refresh]
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=self.token_lifetime_s,
                          refresh_token=refresh, scope=" ".join(scopes) or None)


class OAuthMcpServer(ServedInThread):
    def __init__(self, issuer: Issuer | None = None):
        self.issuer = issuer or Issuer()
        self.port = _free_port()
        base = f"http://127.0.0.1:{self.port}"
        self.mcp = MCPServer(
            "oauth-test",
            auth_server_provider=self.issuer,
            auth=AuthSettings(
                issuer_url=base,
                resource_server_url=f"{base}/mcp",
                client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["tools"], default_scopes=["tools"]),
                required_scopes=["tools"],
                validate_token_resource=False,
            ),
        )

        @self.mcp.tool(description="Say the text back")
        def echo(text: str) -> str:
            return f"echo: {text}"

        super().__init__(self.mcp.streamable_http_app(), port=self.port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
