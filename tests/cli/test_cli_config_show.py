"""`agent-lsp config show`: the merged configuration, each value with where it came from."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import agent_lsp, clean_env


def test_config_show_names_the_source_of_each_value_and_the_policy_wins(tmp_path: Path):
    workspace = tmp_path / "ws"
    (workspace / ".agents" / "skills" / "release").mkdir(parents=True)
    (workspace / ".agents" / "skills" / "release" / "SKILL.md").write_text(
        "---\nname: release\ndescription: Cut a release\n---\nsteps\n", encoding="utf-8")
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a change\ntools: read_file, grep\n---\nReview.\n", encoding="utf-8")
    (workspace / ".agents" / "settings.json").write_text(json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./tests-ran.sh"}]}]}}), encoding="utf-8")
    config = tmp_path / "config" / "agent-lsp" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[model]\nprovider = "anthropic"\nbaseUrl = "https://elsewhere.example"\n'
                      'apiKey = "sk-ant-ConfigShowSecret-123456"\nmaxOutputTokens = 999\n', encoding="utf-8")
    policy = tmp_path / "policy.toml"
    policy.write_text('deniedTools = ["run_command"]\nallowProjectHooks = false\n'
                      '[model]\nprovider = "openai"\nbaseUrl = "https://llm.internal.example/v1"\n', encoding="utf-8")
    env = clean_env(tmp_path, AGENT_LSP_POLICY=str(policy), HOME=str(tmp_path / "home"))

    done = agent_lsp(["config", "show", "--json", "-w", str(workspace), "--settings", '{"maxParallelToolCalls": 3}'], env)
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    settings = {e["name"]: e for e in view["settings"]}
    assert settings["model.baseUrl"]["value"] == "https://llm.internal.example/v1"
    assert settings["model.baseUrl"]["source"] == f"managed policy {policy}"
    assert settings["model.provider"]["value"] == "openai"
    assert settings["model.maxOutputTokens"] == {"name": "model.maxOutputTokens", "value": 999,
                                                 "source": f"user config {config}", "note": ""}
    assert settings["maxParallelToolCalls"]["source"] == "editor settings"
    assert settings["cancelGraceSeconds"]["source"] == "default"
    assert "ConfigShowSecret" not in done.stdout
    (rule,) = view["permission_rules"]
    assert (rule["name"], rule["value"], rule["source"]) == ("run_command", "deny", f"managed policy {policy}")
    (hook,) = view["hooks"]
    assert hook["value"] == "./tests-ran.sh" and hook["source"] == "project .agents/settings.json"
    assert "managed policy forbids project hooks" in hook["note"]
    (skill,) = view["skills"]
    assert skill["name"] == "release" and skill["source"].startswith("project ")
    (reviewer,) = view["agent_types"]
    assert (reviewer["name"], reviewer["value"]) == ("reviewer", "Reviews a change")
    assert reviewer["source"].startswith("project ") and reviewer["note"] == "tools: read_file, grep; model: the parent's"
    # what every request carries, by tool: the tools the policy denies are not offered, the skill tool is
    fixed = view["fixed_prompt"]
    assert "run_command" not in fixed["tool_tokens"] and fixed["tool_tokens"]["skill"] > 0
    assert fixed["full_tokens"] > fixed["small_tokens"] > fixed["system_tokens"] > 0
    assert fixed["small_set"] == ["read_file", "grep", "edit_file"] and fixed["tool_set"] == "auto"

    text = agent_lsp(["config", "show", "-w", str(workspace)], env)
    assert text.returncode == 0, text.stderr
    assert f"model.baseUrl = \"https://llm.internal.example/v1\"    # managed policy {policy}" in text.stdout
    assert "ConfigShowSecret" not in text.stdout
    assert f"fixed prompt (system prompt and tool schemas, characters / 4): about {fixed['full_tokens']} tokens" in text.stdout


def test_a_broken_policy_file_denies_every_tool_and_says_why(tmp_path: Path):
    policy = tmp_path / "policy.toml"
    policy.write_text("deniedTools = 3\n", encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    done = agent_lsp(["config", "show", "--json", "-w", str(workspace)], clean_env(tmp_path, AGENT_LSP_POLICY=str(policy)))
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert [(r["name"], r["value"]) for r in view["permission_rules"]] == [("*", "deny")]
    assert any("deniedTools" in p and "every tool is denied" in p for p in view["problems"])


def test_config_show_says_a_built_in_language_server_is_not_used_while_discovery_is_off(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = {"language": {"enabled": True, "discovery": False},
                "languageServers": {"mine": {"command": "/bin/true", "args": ["--stdio"], "filetypes": ["py"]}}}
    done = agent_lsp(["config", "show", "--json", "-w", str(workspace), "--settings", json.dumps(settings)],
                     clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    servers = {e["name"].split(" ")[0]: e for e in json.loads(done.stdout)["language_servers"]}
    used, _, where = servers["mine"]["note"].partition("; ")  # and where it runs: the commands' sandbox
    assert used == "used: configured, found at /bin/true"
    assert where == "sandboxed, no network" or where.startswith("not sandboxed: "), where
    assert servers["basedpyright"]["note"] == ("not used: language.discovery is false: "
                                               "only the servers named in languageServers run")
    assert servers["clangd"]["note"] == servers["basedpyright"]["note"]
