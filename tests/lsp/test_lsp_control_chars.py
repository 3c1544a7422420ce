"""An editor without the agentLsp capabilities reads the conversation as
`window/logMessage` lines and is asked with `window/showMessageRequest`:
control characters and bidi overrides in that text are shown, not acted on,
while the session's events keep the text as it was."""

from __future__ import annotations

from lsprotocol import types

from lsp_harness import running_server

HOSTILE = "\x1b]52;c;aGk=\x07|\x1b[2J|\x00|\u202eevil|\rhidden|\x9b"
SHOWN = "␛]52;c;aGk=␇|␛[2J|␀|<U+202E>evil|␍hidden|<U+009B>"
RAW = ("\x1b", "\x07", "\x00", "\u202e", "\r", "\x9b")


async def test_log_and_message_lines_show_control_characters(tmp_path):
    script = [{"text": f"model:{HOSTILE}", "tools": [{"name": "run_command", "arguments": {"command": "echo '\x1b[2J'"}}]},
              {"text": "done"}]
    async with running_server(folders=[tmp_path], sessions_dir=tmp_path / "sessions", script=script,
                              agent_capabilities=False) as editor:
        asked: list[str] = []

        @editor.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def on_request(params: types.ShowMessageRequestParams):
            asked.append(params.message)
            return types.MessageActionItem(title="Deny")

        ref = await editor.request("agent/followup", {"content": f"user:{HOSTILE}"})

        def lines() -> list[str]:
            return [m.message for m in editor.client.log_messages]

        await editor.wait_for(lambda: any(line.startswith("— turn") for line in lines()), what="the turn's end line")
        shown = lines()
        assert f"You: user:{SHOWN}" in shown
        assert f"Agent: model:{SHOWN}" in shown
        assert "→ run_command echo '␛[2J'" in shown
        assert asked and "echo '␛[2J'" in asked[0]
        assert [line for line in shown + asked if any(char in line for char in RAW)] == []

        loaded = await editor.request("agent/session/load", {"sessionId": ref["sessionId"]})
        texts = [t for e in loaded["events"] if e["type"] in ("user/message", "assistant/message") for t in _strings(e["data"])]
        assert f"user:{HOSTILE}" in texts and f"model:{HOSTILE}" in texts  # the log and the model keep the raw text


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
