"""Images in a user's message over LSP: the real server and a real local HTTP model
server of each provider format. The image reaches the request in the provider's
shape with the media type its bytes say, is stored once beside the session log
(the log holds a reference, no base64), replay gives the reference, a fork gets
the files of the turns it keeps and a delete removes them; a bad image, one too
large and a model without images are refused with -32602 before any request."""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer  # noqa: E402
from lsp_harness import running_server  # noqa: E402
from test_lsp_prompt_cache import anthropic_text, openai_text  # noqa: E402

# A 1x1 PNG.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"


def sent_images(provider: str, body: dict) -> list[tuple[str, bytes]]:
    """(media type, bytes) of each image of the request's last user message, read as the provider would."""
    last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    out = []
    for part in last if isinstance(last, list) else ():
        if provider == "openai" and part["type"] == "image_url":
            head, data = part["image_url"]["url"].split(",", 1)
            assert head.startswith("data:") and head.endswith(";base64")
            out.append((head[5:-7], base64.b64decode(data)))
        elif provider == "anthropic" and part["type"] == "image":
            assert part["source"]["type"] == "base64"
            out.append((part["source"]["media_type"], base64.b64decode(part["source"]["data"])))
    return out


def page_image(page: dict) -> dict:
    """The first image reference of a replay page's user messages."""
    return next(b for e in page["events"] if e["type"] == "user/message"
                for b in e["data"]["message"]["content"] if b["type"] == "image")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_an_image_reaches_the_model_and_is_stored_once_by_reference(tmp_path: Path, provider: str):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "diagram.gif").write_bytes(GIF)
    (workspace / "notes.png").write_text("not an image at all", encoding="utf-8")
    sessions = tmp_path / "sessions"
    text = openai_text if provider == "openai" else anthropic_text
    fake = FakeServer()
    await fake.start()
    fake.queue(text("a red dot", 0), text("a diagram", 0))
    model = {"provider": provider, "model": "gpt-4.1" if provider == "openai" else "claude-sonnet-4-5",
             "baseUrl": fake.url + ("/v1" if provider == "openai" else ""), "apiKey": "test-key"}
    png = {"type": "image", "data": base64.b64encode(PNG).decode(), "mediaType": "image/jpeg", "name": "shot.png"}
    try:
        async with running_server(folders=[workspace], sessions_dir=sessions, settings={"model": model}) as editor:
            before = len(editor.statuses)
            sid = (await editor.request("agent/followup", {"content": [{"type": "text", "text": "what is this?"}, png]}))["sessionId"]
            await editor.wait_idle(sid, before)
            # the same image again, and one by its path in the workspace
            before = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": [
                {"type": "text", "text": "and these?"}, png, {"type": "image", "uri": "diagram.gif"}]})
            await editor.wait_idle(sid, before)

            # bad input: refused, naming the file, and no request sent
            for block, says in (
                ({"type": "image", "uri": "notes.png"}, "notes.png is not an image the models take"),
                ({"type": "image", "data": base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * (6 * 1024 * 1024)).decode(),
                  "name": "huge.png"}, "huge.png is 6.0 MB, over the limit of 5.0 MB per image"),
                ({"type": "image", "data": "not base64!", "name": "x.png"}, "x.png: its data is not base64"),
                ({"type": "image", "uri": str(tmp_path / "outside.png")}, "is not a file inside the workspace"),
            ):
                with pytest.raises(JsonRpcInvalidParams, match=says):
                    await editor.request("agent/followup", {"sessionId": sid, "content": [{"type": "text", "text": "x"}, block]})
            assert len(fake.requests) == 2

            page = await editor.request("agent/session/replay", {"sessionId": sid})
            store = next(p for p in sessions.iterdir() if p.is_dir())  # the folder's sessions
            stored = page_image(page)
            fetched = await editor.request("agent/session/file", {"sessionId": sid, "file": stored["file"]})
            assert fetched == {"mediaType": "image/png", "data": base64.b64encode(PNG).decode(), "size": len(PNG)}
            for bad in ("../" + stored["file"], "missing.png"):
                with pytest.raises(JsonRpcInvalidParams, match=f"session {sid} has no file"):
                    await editor.request("agent/session/file", {"sessionId": sid, "file": bad})
            child = (await editor.request("agent/session/fork", {"sessionId": sid, "turn": 2}))["sessionId"]
            assert sorted(p.name for p in (store / f"{child}.files").iterdir()) == sorted(
                p.name for p in (store / f"{sid}.files").iterdir())
            # a fork of the first turn only gets the image that turn sent, not the later one
            first_turn = (await editor.request("agent/session/fork", {"sessionId": sid, "turn": 1}))["sessionId"]
            assert [p.name for p in (store / f"{first_turn}.files").iterdir()] == [f"{hashlib.sha256(PNG).hexdigest()}.png"]

            # a model known not to take images is refused before the request; the session goes on
            await editor.request("agent/session/setModel", {"sessionId": sid, "model": "gpt-3.5-turbo"})
            with pytest.raises(JsonRpcInvalidParams, match="the model gpt-3.5-turbo does not take images; choose another or remove the image"):
                await editor.request("agent/followup", {"sessionId": sid, "content": [{"type": "text", "text": "x"}, png]})
            assert len(fake.requests) == 2

            assert (await editor.request("agent/session/delete", {"sessionId": sid}))["deleted"]
            assert not (store / f"{sid}.files").exists()
            assert (store / f"{child}.files").is_dir()
    finally:
        await fake.stop()

    first, second = (seen.body for seen in fake.requests)
    assert sent_images(provider, first) == [("image/png", PNG)]  # the bytes decide, not the declared type
    assert sent_images(provider, second) == [("image/png", PNG), ("image/gif", GIF)]

    users = [e["data"]["message"] for e in page["events"] if e["type"] == "user/message"
             and e["data"]["message"]["source"] == "user"]
    images = [b for m in users for b in m["content"] if b["type"] == "image"]
    digest = hashlib.sha256(PNG).hexdigest()
    assert images[0] == {"type": "image", "mediaType": "image/png", "file": f"{digest}.png", "name": "shot.png",
                         "size": len(PNG)}
    assert images[2]["name"] == "diagram.gif" and images[2]["mediaType"] == "image/gif"
    placeholders = [b["text"] for b in users[0]["content"] if b["type"] == "text"]
    assert placeholders == ["what is this?", f"[image: shot.png, image/png, {len(PNG)} B]"]
    # stored once each, by reference: the log has no base64 of them
    log = (store / f"{child}.jsonl").read_text(encoding="utf-8")
    assert base64.b64encode(PNG).decode() not in log
    assert sorted(p.name for p in (store / f"{child}.files").iterdir()) == [
        f"{hashlib.sha256(GIF).hexdigest()}.gif", f"{digest}.png"]
