"""OAuth for a Streamable HTTP MCP server, through the real language server.

The server (mcp_oauth_server.py) answers 401 until signed in; the SDK's client
auth discovers it, registers, and asks the editor to open the authorization
page. The test's editor plays the browser: it answers `window/showDocument`
(or reads the URL from `window/showMessage`, for an editor that cannot open
pages) by fetching the page with httpx and following the redirect to the
language server's loopback callback."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import httpx
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from mcp_oauth_server import Issuer, OAuthMcpServer
from tools_harness import call, is_error, text_of, tool_server

TURN_S = 40.0


def settings(url: str) -> dict:
    return {
        "mcpServers": {"web": {"type": "http", "url": url}},
        "permissions": {"rules": [{"tool": "mcp__web__*", "action": "allow"}]},
    }


async def browse(url: str) -> int:
    """What the user's browser does with the authorization page: follow it to the callback."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=20) as browser:
        return (await browser.get(url)).status_code


def open_pages_with_show_document(editor) -> list[types.ShowDocumentParams]:
    opened: list[types.ShowDocumentParams] = []
    editor.client.protocol.fm._features.pop(types.WINDOW_SHOW_DOCUMENT, None)  # pytest-lsp's own answers without a browser

    @editor.client.feature(types.WINDOW_SHOW_DOCUMENT)
    async def on_show_document(params: types.ShowDocumentParams):
        opened.append(params)
        return types.ShowDocumentResult(success=await browse(params.uri) == 200)

    return opened


async def echo_turn(editor, text: str) -> str:
    editor.use_script([call("mcp__web__echo", text=text), {"text": "done"}])
    before = len(editor.statuses)
    sid = (await editor.request("agent/followup", {"content": "go"}))["sessionId"]
    await editor.wait_for(lambda: (sid, "idle") in editor.statuses[before:], timeout=TURN_S, what="the turn to end")
    (result,) = [e["data"] for e in editor.events[sid] if e["type"] == "tool/result"]
    assert not is_error(result), text_of(result)
    kinds = [e["type"] for e in editor.events[sid]]
    assert kinds.index("tool/result") < len(kinds) - 1 - kinds[::-1].index("assistant/message")  # a next step followed
    return text_of(result)


async def server_status(editor) -> dict:
    (status,) = (await editor.request("agent/mcp/list", {}))["servers"]
    return status


async def test_the_first_use_signs_in_through_the_browser_and_a_restart_reuses_the_token(tmp_path: Path):
    workspace, sessions, data, log = tmp_path / "ws", tmp_path / "sessions", tmp_path / "data", tmp_path / "server.log"
    workspace.mkdir()
    options = dict(folders=[workspace], sessions_dir=sessions, env={"XDG_DATA_HOME": str(data)}, show_document=True,
                   server_args=("--log-file", str(log), "--log-level", "debug"))
    async with OAuthMcpServer() as http:
        async with tool_server(**options, settings=settings(http.url)) as editor:
            opened = open_pages_with_show_document(editor)
            assert await echo_turn(editor, "hi") == "echo: hi"
            (page,) = opened
            assert page.external is True
            assert page.uri.startswith(f"http://127.0.0.1:{http.port}/authorize?")
            status = await server_status(editor)
            assert status["state"] == "ready" and status["authorization"] == "oauth" and status["signedIn"] is True

        (token_file,) = (data / "agent-lsp" / "mcp-oauth").glob("*.json")
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
        issued = http.issuer.issued
        assert issued and all(token in token_file.read_text() for token in issued)
        written = [log, *(p for p in sessions.rglob("*") if p.is_file())]
        assert "echo: hi" in "".join(p.read_text(errors="replace") for p in written)  # the files are the right ones
        for path in written:
            text = path.read_text(errors="replace")
            assert not [token for token in issued if token in text], f"a token in {path}"

        async with tool_server(**options, settings=settings(http.url)) as editor:
            opened = open_pages_with_show_document(editor)
            assert await echo_turn(editor, "again") == "echo: again"
            assert opened == []  # the stored token was used: no second sign-in
        assert http.issuer.authorize_calls == 1


async def test_an_expired_token_is_refreshed_without_asking(tmp_path: Path):
    workspace, sessions, data = tmp_path / "ws", tmp_path / "sessions", tmp_path / "data"
    workspace.mkdir()
    options = dict(folders=[workspace], sessions_dir=sessions, env={"XDG_DATA_HOME": str(data)}, show_document=True)
    async with OAuthMcpServer(Issuer(token_lifetime_s=1)) as http:
        async with tool_server(**options, settings=settings(http.url)) as editor:
            opened = open_pages_with_show_document(editor)
            assert await echo_turn(editor, "hi") == "echo: hi"
            assert len(opened) == 1
        await asyncio.sleep(1.5)  # the access token has expired
        async with tool_server(**options, settings=settings(http.url)) as editor:
            opened = open_pages_with_show_document(editor)
            assert await echo_turn(editor, "later") == "echo: later"
            assert opened == []
        assert http.issuer.refreshes >= 1 and http.issuer.authorize_calls == 1


async def test_a_refused_sign_in_waits_for_authorize_and_logout_forgets_the_token(tmp_path: Path):
    workspace, data = tmp_path / "ws", tmp_path / "data"
    workspace.mkdir()
    async with OAuthMcpServer(Issuer(refuse=True)) as http, tool_server(
        folders=[workspace], sessions_dir=tmp_path / "sessions", env={"XDG_DATA_HOME": str(data)}, settings=settings(http.url)
    ) as editor:
        # an editor that cannot open pages: the URL comes in a message
        messages: list[str] = []
        editor.client.protocol.fm._features.pop(types.WINDOW_SHOW_MESSAGE, None)

        @editor.client.feature(types.WINDOW_SHOW_MESSAGE)
        async def on_message(params: types.ShowMessageParams):
            messages.append(params.message)
            if "asks you to sign in" in params.message:
                await browse(params.message.rsplit("open ", 1)[1])

        editor.use_script([{"text": "nothing to call"}])
        await editor.request("agent/followup", {"content": "go"})  # the folder's servers start with its first session
        await editor.wait_for(lambda: any("'web' asks you to sign in" in m for m in messages), timeout=TURN_S, what="the sign-in URL")
        status = await wait_for_state(editor, "needs-authorization", lambda s: "access_denied" in (s.get("reason") or ""))
        assert status["signedIn"] is False and status["authorization"] == "oauth"
        assert "authorize it to sign in again" in status["reason"]

        http.issuer.refuse = False
        authorized = await asyncio.wait_for(editor.request("agent/mcp/authorize", {"server": "web"}), TURN_S)
        assert authorized["state"] == "ready" and authorized["signedIn"] is True and authorized["toolCount"] == 1
        assert http.issuer.authorize_calls == 2
        assert list((data / "agent-lsp" / "mcp-oauth").glob("*.json"))

        signed_out = await editor.request("agent/mcp/logout", {"server": "web"})
        assert signed_out["state"] == "needs-authorization" and signed_out["signedIn"] is False
        assert list((data / "agent-lsp" / "mcp-oauth").glob("*.json")) == []

        with pytest.raises(JsonRpcException) as unknown:
            await editor.request("agent/mcp/authorize", {"server": "nope"})
        assert unknown.value.code == -32602 and "no MCP server named 'nope'" in str(unknown.value)


async def wait_for_state(editor, state: str, also=lambda status: True) -> dict:
    for _ in range(400):
        status = await server_status(editor)
        if status["state"] == state and also(status):
            return status
        await asyncio.sleep(0.05)
    raise AssertionError(f"the server never reached {state}: {status}")
