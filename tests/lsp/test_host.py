"""Where a workspace's sessions live, and the host's session bookkeeping (no LSP)."""

from pathlib import Path

from agent_lsp.config import Settings
from agent_lsp.config.layers import SettingsLayers
from agent_lsp.workspace.disk_editor import DiskEditor
from agent_lsp.workspace.host import WorkspaceHost
from agent_lsp.workspace.session_location import sessions_dir_for


def test_sessions_location_default_setting_and_env(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    default = sessions_dir_for(folder, Settings(), {"XDG_DATA_HOME": str(tmp_path / "data")})
    assert default.parent == tmp_path / "data" / "agent-lsp" / "sessions"
    env = {"AGENT_LSP_SESSIONS_DIR": str(tmp_path / "env")}
    layers = SettingsLayers(env, config_file=tmp_path / "no-config.toml")
    by_env = sessions_dir_for(folder, layers.current, env)
    assert by_env.parent == tmp_path / "env"
    layers.set_layer("initializationOptions", {"sessionsDir": str(tmp_path / "set")})
    by_setting = sessions_dir_for(folder, layers.current, env)
    assert by_setting.parent == tmp_path / "set"
    other = sessions_dir_for(tmp_path, Settings(sessions_dir=str(tmp_path / "set")), {})
    assert other != by_setting  # one directory per folder


async def test_host_creates_lists_and_deletes_sessions(tmp_path):
    settings = Settings.model_validate(
        {"model": {"provider": "scripted", "script": [{"text": "hi"}]}, "sessionsDir": str(tmp_path / "sessions")}
    )
    host = WorkspaceHost(tmp_path, settings=settings, editor=DiskEditor([tmp_path]), env={})
    agent = host.new_session(title="first")
    assert host.current().session_id == agent.session_id
    agent.followup("hello")
    await agent.when_idle()
    (listing,) = host.list_sessions()
    assert listing.session_id == agent.session_id and listing.turns == 1
    assert (Path(host.sessions_dir) / "workspace.json").exists()
    assert await host.delete_session(agent.session_id)
    assert host.list_sessions() == [] and not host.has_session(agent.session_id)
    await host.close()
