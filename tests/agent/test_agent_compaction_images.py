"""Images and a small context window: only the images of the last few user
messages are sent (an older one is a short note in the request), the images
sent count in the estimate that decides when to compact, and a compaction that
summarises messages holding images says so in its checkpoint."""

import base64

from agent_lsp.agent.image_data import OLD_IMAGE_NOTE
from agent_lsp.agent.options import CompactionOptions
from agent_lsp.store import files

from agent_helpers import events_of, make_agent, request_texts, settle
from test_agent_compaction import Router

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def with_image(agent, text, name="shot.png", count=1):
    """A user message as the server stores it: the text, then for each image a placeholder and a reference."""
    content = [{"type": "text", "text": text}]
    for i in range(count):
        data = PNG + bytes([i])  # each a file of its own
        file = files.put(agent.session.files, data, "png")
        label = name if count == 1 else f"{i}-{name}"
        content += [{"type": "text", "text": f"[image: {label}, image/png, {len(data)} B]"},
                    {"type": "image", "mediaType": "image/png", "file": file, "name": label, "size": len(data)}]
    return content


def images_of(request):
    return [b for m in request.messages for b in m.get("content", ()) if b.get("type") == "image" and b.get("data")]


async def test_images_older_than_the_last_turns_are_a_note_in_the_request(tmp_path):
    router = Router([])
    agent = make_agent(tmp_path, provider=router.provider(), compaction=CompactionOptions(image_turns=3))
    agent.followup(with_image(agent, "what is on this screen?"))
    await settle(agent)
    for text in ("and the button?", "and the colour?", "now fix the bug"):
        agent.followup(text)
        await settle(agent)
    sent = [len(images_of(r)) for r in router.conversation_requests]
    assert sent == [1, 1, 1, 0]
    assert images_of(router.conversation_requests[0])[0]["data"] == base64.b64encode(PNG + b"\0").decode()
    last = request_texts(router.conversation_requests[3])
    assert last[0] == "what is on this screen?[image: shot.png, image/png, 71 B]" + OLD_IMAGE_NOTE
    # the log keeps the image: the session is unchanged, only the request leaves it out
    first = events_of(agent, "user/message")[0].data["message"]["content"]
    assert [b["type"] for b in first] == ["text", "text", "image"]


async def test_images_sent_count_toward_compaction_and_its_checkpoint_names_them(tmp_path):
    router = Router([{"text": "answer one " * 30}, {"text": "answer two " * 30}, {"text": "I see two screens"}])
    agent = make_agent(tmp_path, provider=router.provider(context_window=5000))
    agent.followup(with_image(agent, "OLD sentinel " + "context " * 100, name="old.png"))
    await settle(agent)
    agent.followup("second question " + "more " * 100)
    await settle(agent)
    assert not events_of(agent, "compaction/summary")  # the text alone is far from the window
    # Two more images (IMAGE_TOKENS each, with the old one 3 x 1600 of a 5000-token window)
    # push the next request past the threshold; without the old image it fits again.
    agent.followup(with_image(agent, "compare these", count=2))
    await settle(agent)
    assert len(events_of(agent, "compaction/summary")) == 1
    last = router.conversation_requests[-1]
    assert len(images_of(last)) == 2  # the new images are sent; the compacted one is not
    checkpoint = request_texts(last)[0]
    assert "RECOVERY CHECKPOINT" in checkpoint and "OLD sentinel" not in checkpoint
    assert "The compacted conversation held 1 image (old.png), no longer shown to the model" in checkpoint
    assert [e.data["reason"]["kind"] for e in events_of(agent, "turn/end")] == ["completed"] * 3
