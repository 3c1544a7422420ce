"""Images from the command line against a real local OpenAI-compatible server:
`agent-lsp run --image PATH` (repeatable) and `/image PATH` in `chat` send them as
`image_url` data URLs; a file that is not an image is refused by name before any
request; a file that cannot be read is a usage error. The transcript, live and
replayed, prints each image with the path of the file the session keeps it in."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import sys
from pathlib import Path

from cli_helpers import agent_lsp, clean_env

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
from llm_fake_server import FakeServer, Reply  # noqa: E402

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"


def _image_urls(body: dict) -> list[str]:
    content = body["messages"][-1]["content"]
    return [p["image_url"]["url"] for p in content if p["type"] == "image_url"] if isinstance(content, list) else []


def test_run_and_chat_send_images_and_refuse_what_is_not_one(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pictures = tmp_path / "pictures"  # outside the workspace: the client reads the file
    pictures.mkdir()
    (pictures / "shot.png").write_bytes(PNG)
    (pictures / "logo.webp").write_bytes(WEBP)
    (pictures / "notes.png").write_text("just text", encoding="utf-8")

    async def scenario():
        fake = FakeServer()
        await fake.start()
        fake.queue(Reply.openai_text("two pictures"), Reply.openai_text("a dot"))
        env = clean_env(tmp_path, OPENAI_BASE_URL=fake.url + "/v1", AGENT_LSP_MODEL="gpt-4.1",
                        AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
        run = ["run", "what are these?", "-w", str(workspace)]
        both = await asyncio.to_thread(agent_lsp, [*run, "--image", str(pictures / "shot.png"),
                                                   "--image", str(pictures / "logo.webp")], env)
        refused = await asyncio.to_thread(agent_lsp, [*run, "--image", str(pictures / "notes.png")], env)
        missing = await asyncio.to_thread(agent_lsp, [*run, "--image", str(pictures / "gone.png")], env)
        chat = await asyncio.to_thread(agent_lsp, ["chat", "-w", str(workspace)], env,
                                       input=f"/image {pictures / 'shot.png'}\nand this?\n/exit\n")
        sid = re.search(r"--session ([\w-]+)", chat.stderr).group(1)
        show = await asyncio.to_thread(agent_lsp, ["sessions", "show", sid, "-w", str(workspace)], env)
        await fake.stop()
        return both, refused, missing, chat, show, fake

    both, refused, missing, chat, show, fake = asyncio.run(scenario())
    assert both.returncode == 0, both.stderr
    assert "two pictures" in both.stdout
    assert refused.returncode != 0 and "notes.png is not an image the models take" in refused.stderr
    assert missing.returncode == 2 and "cannot read the image" in missing.stderr and "gone.png" in missing.stderr
    assert "attached" in chat.stderr and "a dot" in chat.stdout + chat.stderr
    assert len(fake.requests) == 2
    first, second = (seen.body for seen in fake.requests)
    assert _image_urls(first) == ["data:image/png;base64," + base64.b64encode(PNG).decode(),
                                  "data:image/webp;base64," + base64.b64encode(WEBP).decode()]
    assert _image_urls(second) == ["data:image/png;base64," + base64.b64encode(PNG).decode()]

    # the stored file's path, printed live by chat and by `sessions show`
    kept = re.search(rf"\[image: shot\.png, {len(PNG)} B\] (\S+)", chat.stdout)
    assert kept, chat.stdout
    path = Path(kept.group(1))
    assert path.name == f"{hashlib.sha256(PNG).hexdigest()}.png" and path.read_bytes() == PNG
    assert show.returncode == 0, show.stderr
    assert "> and this?\n" in show.stdout and f"[image: shot.png, {len(PNG)} B] {path}" in show.stdout
