"""Old images and a model's context: through the real server and a real local
Anthropic-format server, an image is sent with its own message and the next
two; from the fourth message on the request holds its placeholder and a short
note instead of the bytes, while the session keeps the image."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer  # noqa: E402
from lsp_harness import running_server  # noqa: E402
from test_lsp_images import PNG  # noqa: E402
from test_lsp_prompt_cache import anthropic_text  # noqa: E402


def image_blocks(body: dict) -> list[dict]:
    return [part for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
            for part in m["content"] if part["type"] == "image"]


async def test_an_image_older_than_three_messages_is_a_note_in_the_request(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake = FakeServer()
    await fake.start()
    fake.queue(*(anthropic_text(f"answer {i}", 0) for i in range(4)))
    model = {"provider": "anthropic", "model": "claude-sonnet-4-5", "baseUrl": fake.url, "apiKey": "test-key"}
    png = {"type": "image", "data": base64.b64encode(PNG).decode(), "name": "shot.png"}
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                  settings={"model": model}) as editor:
            sid = None
            for content in ([{"type": "text", "text": "what is on this screen?"}, png], "and the button?",
                            "and the colour?", "now fix the bug"):
                before = len(editor.statuses)
                sid = (await editor.request("agent/followup", {"content": content, **({"sessionId": sid} if sid else {})}))["sessionId"]
                await editor.wait_idle(sid, before)
            page = await editor.request("agent/session/replay", {"sessionId": sid})
    finally:
        await fake.stop()
    bodies = [seen.body for seen in fake.requests]
    assert [len(image_blocks(b)) for b in bodies] == [1, 1, 1, 0]
    first = next(m for m in bodies[3]["messages"] if m["role"] == "user")
    text = " ".join(part["text"] for part in first["content"] if part["type"] == "text")
    assert f"[image: shot.png, image/png, {len(PNG)} B]" in text
    assert "(an image of an earlier turn, no longer sent to the model; ask the user to attach it again" in text
    kept = [b for e in page["events"] if e["type"] == "user/message" for b in e["data"]["message"]["content"]
            if b["type"] == "image"]
    assert len(kept) == 1  # the session still holds it: only the request leaves it out
