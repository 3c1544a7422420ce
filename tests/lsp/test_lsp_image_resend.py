"""A message of the transcript sent again with its images (a retry): the client
gives back the references the session's events hold (`{type: "image", file}`),
and the server sends the kept image to the model again, with one placeholder;
a file the session does not keep is refused with -32602, naming it. The
session's title is the user's words, without the image's placeholder, and the
Markdown export names the image on a line of its own."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer  # noqa: E402
from lsp_harness import running_server  # noqa: E402
from test_lsp_images import PNG, page_image, sent_images  # noqa: E402
from test_lsp_prompt_cache import openai_text  # noqa: E402


async def test_a_message_sent_again_with_its_image_references_sends_the_kept_images(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake = FakeServer()
    await fake.start()
    fake.queue(openai_text("a red dot", 0), openai_text("still a red dot", 0))
    model = {"provider": "openai", "model": "gpt-4.1", "baseUrl": fake.url + "/v1", "apiKey": "test-key"}
    png = {"type": "image", "data": base64.b64encode(PNG).decode(), "name": "shot.png"}
    try:
        async with running_server(folders=[workspace], sessions_dir=tmp_path / "sessions",
                                  settings={"model": model}) as editor:
            before = len(editor.statuses)
            sid = (await editor.request("agent/followup", {"content": [{"type": "text", "text": "what is this?"}, png]}))["sessionId"]
            await editor.wait_idle(sid, before)
            listed = (await editor.request("agent/session/list", {}))["sessions"]
            exported = (await editor.request("agent/session/export", {"sessionId": sid}))["markdown"]
            page = await editor.request("agent/session/replay", {"sessionId": sid})
            first = next(e["data"]["message"]["content"] for e in page["events"] if e["type"] == "user/message")
            with pytest.raises(JsonRpcInvalidParams, match="the image gone.png is not one this session keeps"):
                await editor.request("agent/followup", {"sessionId": sid, "content": [
                    {"type": "text", "text": "x"}, {"type": "image", "file": "0" * 64 + ".png", "name": "gone.png"}]})
            before = len(editor.statuses)
            await editor.request("agent/followup", {"sessionId": sid, "content": first})  # as a retry sends it
            await editor.wait_idle(sid, before)
            page = await editor.request("agent/session/replay", {"sessionId": sid})
    finally:
        await fake.stop()
    assert len(fake.requests) == 2
    assert sent_images("openai", fake.requests[1].body) == [("image/png", PNG)]
    again = [e["data"]["message"]["content"] for e in page["events"] if e["type"] == "user/message"][-1]
    assert again == first  # one placeholder, the same reference
    assert page_image(page)["file"] == first[2]["file"]
    # the title is the user's words, the export names the image on a line of its own
    assert [s["title"] for s in listed] == ["what is this?"]
    assert f"## You\n\nwhat is this?\n\n[image: shot.png, image/png, {len(PNG)} B]\n\n## Agent" in exported
