"""Configuration mistakes as a user makes them, seen through `agent-lsp run`:
an unknown key warns with the nearest valid one and everything else applies;
a setting that cannot apply stops the command with one line saying why,
instead of a quiet fall-back to the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import agent_lsp, clean_env


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config" / "agent-lsp" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_unknown_keys_warn_with_the_nearest_valid_key(tmp_path: Path, workspace: Path):
    _config(tmp_path, 'maxParalelToolCalls = 3\n\n[modle]\nprovider = "openai"\n\n'
                      '[model]\nprovider = "scripted"\ntemprature = 0.2\n')
    done = agent_lsp(["run", "hello", "-w", str(workspace)], clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "You said: hello" in done.stdout  # the valid keys applied
    for wrong, right in [("maxParalelToolCalls", "maxParallelToolCalls"), ("modle", "model"),
                         ("model.temprature", "model.temperature")]:
        assert f'unknown setting "{wrong}" (did you mean "{right}"?)' in done.stderr
    assert "Extra inputs" not in done.stderr and "pydantic" not in done.stderr


@pytest.mark.parametrize(
    ("config", "env", "expected"),
    [
        (None, {"AGENT_LSP_CONFIG": "{tmp}/missing.toml"}, "AGENT_LSP_CONFIG names {tmp}/missing.toml, which does not exist"),
        ("[model\nprovider = 'openai'\n", {}, "is not valid TOML"),
        ('[model]\nprovider = "olama"\n', {},
         "setting model.provider = 'olama': must be one of 'auto', 'openai', 'anthropic' or 'scripted'"),
        (None, {"AGENT_LSP_PROVIDER": "olama"},
         "environment: setting model.provider = 'olama': must be one of"),
        ("maxParallelToolCalls = 0\n", {}, "setting maxParallelToolCalls = 0: must be greater than or equal to 1"),
        ('[model]\nbaseUrll = "http://127.0.0.1:9/v1"\n', {},
         'unknown setting "model.baseUrll" (did you mean "model.baseUrl"?); ignored, so no model is configured'),
    ],
    ids=["missing-config-file", "malformed-file", "unknown-provider", "unknown-provider-env", "bad-value",
         "misspelt-model-key-leaves-no-model"],
)
def test_a_setting_that_cannot_apply_stops_run(tmp_path: Path, workspace: Path, config, env, expected):
    if config is not None:
        _config(tmp_path, config)
    env = {k: v.format(tmp=tmp_path) for k, v in env.items()}
    done = agent_lsp(["run", "hello", "-w", str(workspace)], clean_env(tmp_path, **env))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""  # no scripted model answered instead
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent-lsp run: "), lines
    assert expected.format(tmp=tmp_path) in lines[0]
    assert "Traceback" not in done.stderr and "ValueError" not in done.stderr


def test_the_demo_stops_on_a_broken_configuration(tmp_path: Path):
    _config(tmp_path, '[model]\nprovider = "olama"\n')
    done = agent_lsp(["demo", "--dir", str(tmp_path / "demo")], clean_env(tmp_path))
    assert done.returncode == 2
    assert "model.provider = 'olama'" in done.stderr
