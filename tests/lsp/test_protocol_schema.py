"""The committed JSON Schema is the contract the editor clients test against."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp import protocol_gen

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"


def test_committed_schema_matches_the_models():
    assert SCHEMA.read_text(encoding="utf-8") == protocol_gen.schema_text(), (
        "docs/protocol.schema.json is stale: run `python -m agent_lsp.lsp.protocol_gen --schema > docs/protocol.schema.json`"
    )


def test_every_method_of_the_wire_table_is_in_the_schema():
    methods = protocol_gen.json_schema()["methods"]
    for name in [
        "agent/followup", "agent/steer", "agent/cancel", "agent/inbox/remove", "agent/session/new",
        "agent/session/list", "agent/session/load", "agent/session/delete", "agent/session/compact",
        "agent/turn/revert", "session/event", "agent/status", "agent/inbox/inserted",
        "agent/inbox/discarded", "agent/inbox/claimed", "agent/error", "agent/tool/progress",
        "agent/permission", "agent/saveDocuments",
    ]:
        assert name in methods, name


def test_params_use_camel_case_on_the_wire():
    params = wire.FollowupParams.model_validate({"sessionId": "s_1", "content": "hi", "workspaceUri": "file:///w"})
    assert params.session_id == "s_1"
    assert wire.wire_dump(params) == {"sessionId": "s_1", "content": "hi", "workspaceUri": "file:///w"}
    assert wire.wire_dump(wire.CancelParams(session_id="s")) == {"sessionId": "s", "keepInbox": False}


def test_validation_error_names_the_field():
    with pytest.raises(ValidationError) as info:
        wire.FollowupParams.model_validate({"content": 42})
    assert "content" in wire.describe_validation_error(info.value)
    with pytest.raises(ValidationError) as info:
        wire.ContextItem.model_validate({"kind": "folder", "uri": "file:///x"})
    assert "kind" in wire.describe_validation_error(info.value)


LUA = Path(__file__).resolve().parents[2] / "editors" / "neovim" / "lua" / "agent_lsp" / "protocol.lua"


def test_the_neovim_plugins_constants_are_generated_from_the_schema():
    assert LUA.read_text(encoding="utf-8") == protocol_gen.lua_text(), (
        "editors/neovim/lua/agent_lsp/protocol.lua is stale: run "
        "`python -m agent_lsp.lsp.protocol_gen --lua > editors/neovim/lua/agent_lsp/protocol.lua`"
    )
    assert f"M.SESSION_IN_USE_CODE = {wire.SESSION_IN_USE_CODE}" in protocol_gen.lua_text()


def test_every_durable_event_type_has_typed_data_in_the_schema():
    schema = protocol_gen.json_schema()
    union = schema["$defs"]["Event"]
    mapping = union["discriminator"]["mapping"]
    assert {"turn/start", "assistant/chunk", "tool/result", "turn/revert", "llm/retry"} <= set(mapping)
    chunk_event = schema["$defs"][mapping["assistant/chunk"].rsplit("/", 1)[-1]]
    assert chunk_event["properties"]["data"] == {"$ref": "#/$defs/AssistantChunk"}
