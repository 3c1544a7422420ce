"""The agent's commands run without the server's secrets, unless the `shell` settings pass them."""

from __future__ import annotations

from lsp_harness import running_server

ENV = {
    "OPENAI_API_KEY": "sk-proj-EnvTestKey0123456789",
    "ANTHROPIC_API_KEY": "EnvTestAnthropic-0123456789",
    "AGENT_LSP_API_KEY": "EnvTestGeneric-0123456789",
    "AGENT_LSP_MODEL": "some-model",
    "GATEWAY_TOKEN": "EnvTestGateway-0123456789",
    "MY_ALIAS": "AliasSecret-0123456789",  # an innocent name, but the settings' key
    "PLAIN_VAR": "visible",
}


def command_output(editor, sid: str) -> str:
    (result,) = [e for e in editor.events[sid] if e["type"] == "tool/result"]
    assert not result["data"]["message"]["isError"], result
    return result["data"]["message"]["content"][0]["text"]


async def run(tmp_path, command: str, settings: dict) -> str:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    script = [{"tools": [{"name": "run_command", "arguments": {"command": command}}]}, {"text": "done"}]
    model = {"provider": "scripted", "script": script, "apiKey": ENV["MY_ALIAS"]}
    async with running_server(folders=[workspace], sessions_dir=tmp_path / "s", env=ENV,
                              settings={"model": model, **settings}) as editor:
        sid = (await editor.request("agent/followup", {"content": "run it"}))["sessionId"]
        await editor.wait_idle(sid)
        return command_output(editor, sid)


async def test_env_shows_no_key_and_no_agent_lsp_variable_by_default(tmp_path):
    output = await run(tmp_path, "env", {})
    names = {line.split("=", 1)[0] for line in output.splitlines() if "=" in line}
    assert "PLAIN_VAR=visible" in output.splitlines() and "PATH" in names
    assert not names & {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GATEWAY_TOKEN", "MY_ALIAS"}
    assert not [name for name in names if name.startswith("AGENT_LSP_")]
    assert not [value for value in ENV.values() if value != "visible" and value in output]


async def test_shell_settings_pass_variables_through_and_narrow_the_rest(tmp_path):
    # (the token is compared, not printed: printed, it would be masked)
    command = 'case "$GATEWAY_TOKEN" in EnvTestG*) echo gateway=passed;; *) echo gateway=missing;; esac; ' \
              'echo "plain=${PLAIN_VAR:-unset}"; echo "path=${PATH:+set}"'
    output = await run(tmp_path, command, {"shell": {"inherit": "core", "passEnv": ["GATEWAY_*"]}})
    assert output.splitlines()[:3] == ["gateway=passed", "plain=unset", "path=set"]
