"""Failed turns and the model connection, in a real headless Neovim against
the real server: :checkhealth probes the configured endpoint and names the
setting to change, a failed turn says how to retry, and :AgentRetry sends
its message again."""

from __future__ import annotations

import socket

from nvim_harness import SERVER_CMD, Editor


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def health_report(editor: Editor) -> str:
    editor.cmd("checkhealth agent_lsp")
    return "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))


def test_checkhealth_probes_the_model_connection(editor: Editor) -> None:
    editor.setup([{"text": "pong"}])
    editor.edit("a.py")
    editor.wait_attached()
    report = health_report(editor)
    assert "OK model connection: scripted scripted answered in " in report


def test_a_refused_endpoint_is_reported_with_its_url_and_the_setting_to_change(editor: Editor) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    editor.lua("require('agent_lsp').setup(...)", {
        "cmd": SERVER_CMD, "settings": {"model": {"provider": "openai", "baseUrl": url, "apiKey": "k", "model": "m"}}})
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk hello")
    editor.wait_idle()
    lines = editor.chat_lines()
    error = next(i for i, line in enumerate(lines) if line.startswith("**Error** `NETWORK`"))
    assert url in lines[error]
    assert lines[error + 1] == "_↻ :AgentRetry sends the message again_"
    assert not any("retrying" in line for line in lines)  # a refused local endpoint is not retried

    report = health_report(editor)
    assert f"ERROR model connection: openai m at {url} failed: NETWORK" in report
    assert "Change model.baseUrl in setup({ settings = { model = { ... } } })." in report


def test_agent_retry_sends_the_failed_turns_message_again(editor: Editor) -> None:
    editor.setup([{"fail": "AUTH", "message": "the key was refused"}, {"text": "answered the second time"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("2AgentAsk explain this line")
    editor.wait_idle()
    assert "**Error** `AUTH`: the key was refused" in editor.chat_lines()
    editor.cmd("AgentRetry")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the retried turn")
    messages = editor.lua("return vim.tbl_map(function(e) return e.data.message end, vim.tbl_filter(function(e) "
                          "return e.type == 'user/message' and e.data.message.source == 'user' end, T.session().events))")
    assert len(messages) == 2
    assert messages[1]["content"] == messages[0]["content"] and messages[1]["context"] == messages[0]["context"]
    assert messages[1]["context"][0]["text"] == "print(x)"
    assert "answered the second time" in editor.chat_text()
    editor.cmd("AgentRetry")
    assert any("the last turn did not fail" in n["msg"] for n in editor.lua("return _G.test_notes"))
    assert editor.errors() == []


def test_the_retries_of_a_step_are_one_line_updated_in_place(editor: Editor) -> None:
    editor.setup([{"fail": "OVERLOADED"}, {"fail": "OVERLOADED"}, {"text": "finally through"}])
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk hello")
    editor.wait_idle()
    retries = [line for line in editor.chat_lines() if "retrying" in line]
    assert len(retries) == 1 and "(retry 2)" in retries[0], retries
    assert "finally through" in editor.chat_text()
