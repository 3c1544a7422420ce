"""Image content blocks over ACP: the real `agent-lsp acp` and the ACP SDK client against
a real local HTTP model server. The image reaches the model as an `image_url` data URL
with the media type its bytes say; a block that is not an image, or one too large, is
refused with -32602 naming it, and the session goes on."""

from __future__ import annotations

import asyncio
import base64
import sys
from pathlib import Path

import acp
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from acp_harness import AcpTestClient, acp_agent  # noqa: E402
from llm_fake_server import FakeServer, Reply  # noqa: E402

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"


async def test_an_image_block_reaches_the_model_and_bad_ones_are_refused(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake = FakeServer()
    await fake.start()
    fake.queue(Reply.openai_text("a photo"), Reply.openai_text("still here"))
    client = AcpTestClient()
    model = {"provider": "openai", "model": "gpt-4.1", "baseUrl": fake.url + "/v1", "apiKey": "k"}
    try:
        async with acp_agent(client, tmp_path / "sessions", model_extra=model) as conn:
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            photo = acp.image_block(base64.b64encode(JPEG).decode(), "image/png", uri="file:///home/me/photo.jpg")
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("what is it?"), photo]), 30)
            for block, says in (
                (acp.image_block(base64.b64encode(b"hello").decode(), "image/png", uri="file:///tmp/notes.txt"),
                 "notes.txt .* is not an image the models take"),
                (acp.image_block(base64.b64encode(b"GIF89a" + b"\0" * (6 * 1024 * 1024)).decode(), "image/gif"),
                 "image 2 is 6.0 MB, over the limit of 5.0 MB per image"),
            ):
                with pytest.raises(acp.RequestError, match=says) as refused:
                    await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("and this?"), block]), 30)
                assert refused.value.code == -32602
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("go on")]), 30)
        # a load replays the image itself (from the session's files), after the message's text
        reloaded = AcpTestClient()
        async with acp_agent(reloaded, tmp_path / "sessions", model_extra=model) as conn:
            await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[]), 30)
            shown = [u.content for u in reloaded.of(sid) if u.session_update == "user_message_chunk"]
    finally:
        await fake.stop()
    assert [(c.type, getattr(c, "text", None) or c.mime_type) for c in shown] == [
        ("text", "what is it?[image: photo.jpg, image/jpeg, 22 B]"), ("image", "image/jpeg"), ("text", "go on")]
    assert shown[1].data == base64.b64encode(JPEG).decode()
    first, second = (seen.body for seen in fake.requests)
    parts = first["messages"][-1]["content"]
    assert parts[0] == {"type": "text", "text": "what is it?"}
    assert parts[-1] == {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(JPEG).decode()}}
    assert "[image: photo.jpg, image/jpeg" in str(second["messages"])


async def test_a_model_set_not_to_take_images_is_refused_before_the_request(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake = FakeServer()
    await fake.start()
    fake.queue(Reply.openai_text("text only"))
    client = AcpTestClient()
    model = {"provider": "openai", "model": "house-model", "baseUrl": fake.url + "/v1", "apiKey": "k", "images": False}
    try:
        async with acp_agent(client, tmp_path / "sessions", model_extra=model) as conn:
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            photo = acp.image_block(base64.b64encode(JPEG).decode(), "image/jpeg")
            with pytest.raises(acp.RequestError, match="the model house-model does not take images; "
                                                       "choose another or remove the image") as refused:
                await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("look"), photo]), 30)
            assert refused.value.code == -32602
            assert fake.requests == []
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("look")]), 30)
    finally:
        await fake.stop()
    assert len(fake.requests) == 1 and fake.requests[0].body["messages"][-1]["content"] == "look"


async def test_an_endpoint_that_refused_an_image_is_remembered_for_the_session(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake = FakeServer()
    await fake.start()
    refusal = {"error": {"message": "image input is not supported for this model", "type": "invalid_request_error"}}
    fake.queue(Reply.json(400, refusal), Reply.openai_text("text only"))
    client = AcpTestClient()
    model = {"provider": "openai", "model": "house-model", "baseUrl": fake.url + "/v1", "apiKey": "k"}
    photo = acp.image_block(base64.b64encode(JPEG).decode(), "image/jpeg")
    try:
        async with acp_agent(client, tmp_path / "sessions", model_extra=model) as conn:
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            with pytest.raises(acp.RequestError, match="not supported"):  # the endpoint's own answer, once
                await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("look"), photo]), 30)
            with pytest.raises(acp.RequestError, match="the model house-model does not take images") as refused:
                await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("again"), photo]), 30)
            assert refused.value.code == -32602
            assert len(fake.requests) == 1
    finally:
        await fake.stop()
