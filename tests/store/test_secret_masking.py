"""What `agent_lsp.secrets` masks, and the ordinary text it leaves alone."""

from __future__ import annotations

import json
import logging

from agent_lsp import secrets
from agent_lsp.store import SessionStore


def test_registered_values_and_key_shapes_are_masked_but_words_and_code_are_not():
    secrets.register("GatewayTok-0123abcd")
    assert secrets.mask("token GatewayTok-0123abcd here") == "token *** here"
    assert secrets.mask("Authorization: Bearer abc123def456ghi") == "Authorization: Bearer ***"
    assert secrets.mask("sk-ant-api03-Zx9k2mQ7vL4pR8tY") == "sk-ant-***"
    assert secrets.mask("gsk_8f7e6d5c4b3a2910zz") == "gsk_***"
    for text in ("sk-learn", "Bearer authentication", 'f"Bearer {api_key}"', "api_key=api_key", "hf_hub_download"):
        assert secrets.mask(text) == text


def test_logs_also_mask_fields_named_like_secrets_before_anyone_registered_them():
    line = "InitializeParams(initialization_options={'model': {'apiKey': 'plain-value-1', 'headers': {'X-Any': 'plain-value-2'}}})"
    masked = secrets.mask_fields(line)
    assert "plain-value-1" not in masked and "plain-value-2" not in masked
    assert secrets.mask_fields("OPENAI_API_KEY=plainvalue3\nPATH=/usr/bin") == "OPENAI_API_KEY=***\nPATH=/usr/bin"


def test_the_log_formatter_masks_messages_arguments_and_tracebacks(tmp_path):
    secrets.register("LogCanary-77aa42b8")
    handler = logging.FileHandler(tmp_path / "log", encoding="utf-8")
    secrets.install_log_masking([handler])
    log = logging.getLogger("test-secret-masking")
    log.addHandler(handler)
    try:
        log.error("key %s", "LogCanary-77aa42b8")
        try:
            raise ValueError("boom LogCanary-77aa42b8")
        except ValueError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
        handler.close()
    text = (tmp_path / "log").read_text()
    assert "LogCanary-" not in text and "key ***" in text and "ValueError: boom ***" in text


def test_a_session_keeps_and_stores_the_masked_event(tmp_path):
    secrets.register("EventCanary-5f3c0de7")
    store = SessionStore(tmp_path)
    session = store.create()
    event = session.append("llm/retry", {"error": {"message": 'bad chunk {"k": "EventCanary-5f3c0de7\\"'}})
    output = session.append("tool/result", {"text": "OPENAI_API_KEY\nsk-proj-Zx9k2mQ7vL4pR8tY\n"})  # after an escape
    session.flush()
    assert "EventCanary" not in json.dumps(event.to_json()) and output.data == {"text": "OPENAI_API_KEY\nsk-proj-***\n"}
    assert "EventCanary" not in store.path_of(session.id).read_text()
    assert "Zx9k2mQ7" not in store.path_of(session.id).read_text()
    assert store.load(session.id).events[0].data == event.data


def test_settings_register_keys_tokens_and_header_and_env_values_at_any_depth():
    layer = {
        "model": {"apiKey": "SettingKey-0001", "headers": {"X-Gw": "SettingHdr-0002", "HTTP-Referer": "https://example.org"}},
        "mcpServers": {"docs": {"headers": {"Authorization": "SettingMcp-0003"}, "env": {"ANY_NAME": "SettingEnv-0004"}}},
        "someToken": "SettingTok-0005",
        "sessionsDir": "/home/me/sessions-dir",
    }
    secrets.register_settings(layer)
    text = " ".join(["SettingKey-0001", "SettingHdr-0002", "SettingMcp-0003", "SettingEnv-0004", "SettingTok-0005"])
    assert secrets.mask(text) == " ".join(["***"] * 5)
    assert secrets.mask("https://example.org /home/me/sessions-dir") == "https://example.org /home/me/sessions-dir"
