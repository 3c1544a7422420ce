"""Settings layers: defaults < user TOML file < env < initializationOptions < workspace/configuration."""

from pathlib import Path

from agent_lsp.config.files import user_config_path
from agent_lsp.config.layers import SettingsLayers


def make(tmp_path: Path, toml: str = "", env: dict | None = None) -> SettingsLayers:
    config = tmp_path / "config.toml"
    if toml:
        config.write_text(toml, encoding="utf-8")
    return SettingsLayers(env=env or {}, config_file=config)


def test_defaults_without_any_layer(tmp_path):
    layers = make(tmp_path)
    assert layers.current.model.provider == "auto"
    assert layers.current.sessions_dir is None
    assert layers.problems == []


def test_precedence_of_the_layers(tmp_path):
    layers = make(
        tmp_path,
        toml='sessionsDir = "/from/file"\nlogLevel = "info"\n[model]\nprovider = "openai"\nmodel = "file-model"\n',
        env={"AGENT_LSP_MODEL": "env-model", "AGENT_LSP_SESSIONS_DIR": "/from/env"},
    )
    assert layers.current.model.provider == "openai"  # file
    assert layers.current.model.model == "env-model"  # env over file
    assert layers.current.sessions_dir == "/from/env"
    assert layers.set_layer("initializationOptions", {"model": {"model": "init-model"}}) == []
    assert layers.current.model.model == "init-model"
    assert layers.current.model.provider == "openai"  # deep merge keeps the file's provider
    assert layers.set_layer("workspace", {"model": {"model": "ws-model"}, "sessionsDir": "/ws"}) == []
    assert (layers.current.model.model, layers.current.sessions_dir) == ("ws-model", "/ws")
    assert layers.current.log_level == "info"


def test_bad_value_is_reported_and_the_previous_value_kept(tmp_path):
    layers = make(tmp_path)
    layers.set_layer("workspace", {"maxParallelToolCalls": 4})
    problems = layers.set_layer("workspace", {"maxParallelToolCalls": "many", "model": {"model": "m2"}}, source="workspace")
    assert len(problems) == 1 and "maxParallelToolCalls" in problems[0]
    assert layers.current.max_parallel_tool_calls == 4  # the previous value
    assert layers.current.model.model == "m2"  # the good key still applies
    problems = layers.set_layer("workspace", {"model": {"provider": "nope"}})
    assert "model.provider" in problems[0]
    assert layers.current.model.provider == "auto"


def test_broken_config_file_is_a_problem_not_a_crash(tmp_path):
    layers = make(tmp_path, toml="this is = = not toml")
    assert layers.problems and "config file" in layers.problems[0]
    assert layers.current.model.provider == "auto"


def test_config_file_location_follows_the_platform_and_env(tmp_path):
    assert user_config_path({"AGENT_LSP_CONFIG": str(tmp_path / "c.toml")}) == tmp_path / "c.toml"
    assert user_config_path({"XDG_CONFIG_HOME": str(tmp_path)}).name == "config.toml"
