"""agent/model/info: a client learns which model answers before any turn, and
whether nothing is configured (the scripted demo model then answers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import running_server
from pygls.exceptions import JsonRpcInvalidParams

NO_MODEL_ENV = {name: "" for name in (
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENT_LSP_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL",
    "AGENT_LSP_BASE_URL", "AGENT_LSP_PROVIDER", "AGENT_LSP_MODEL")}


async def test_nothing_configured_is_the_demo_model_and_a_key_changes_that(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions", settings={"model": {}},
                              env=NO_MODEL_ENV) as editor:
        info = await editor.request("agent/model/info", {"workspaceUri": workspace.as_uri()})
        assert info["provider"] == "scripted" and info["demo"] is True
        assert "no API key" in info["reason"]
        # The editor stores a key (VS Code's "Set API Key…" does this): the next answer names that model.
        editor.configure({"model": {"provider": "anthropic", "apiKey": "sk-ant-test", "model": "claude-sonnet-4-5"}})
        for _ in range(50):
            info = await editor.request("agent/model/info", {})
            if info["provider"] == "anthropic":
                break
        assert info == {"provider": "anthropic", "model": "claude-sonnet-4-5", "reason": "configured", "demo": False}


async def test_a_scripted_model_asked_for_is_not_the_demo_fallback(tmp_path: Path):
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "sessions", script=[{"text": "hi"}]) as editor:
        info = await editor.request("agent/model/info", {})
    assert info["provider"] == "scripted" and info["demo"] is False


async def test_an_unknown_folder_is_a_readable_error(tmp_path: Path):
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "sessions") as editor:
        with pytest.raises(JsonRpcInvalidParams, match="not a workspace folder"):
            await editor.request("agent/model/info", {"workspaceUri": "file:///nowhere/at/all"})
