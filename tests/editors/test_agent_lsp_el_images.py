"""Images in Emacs (editors/emacs/agent-lsp-images.el in a real batch Emacs,
against the real server): M-x agent-lsp-attach-image attaches an image file
to the next message, which the session stores; the chat buffer shows it as
an `[image: name, size]` line (a text frame: no inline image); a file that is
not an image is named at once; a model that takes no images refuses the
message with its reason and the image stays attached until cleared."""

from __future__ import annotations

import base64
from pathlib import Path

from emacs_batch import needs_eglot
from test_agent_lsp_el import run_package

pytestmark = needs_eglot

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def pictures(tmp_path: Path) -> Path:
    folder = tmp_path / "pictures"
    folder.mkdir()
    (folder / "shot.png").write_bytes(PNG)
    (folder / "notes.png").write_text("just text", encoding="utf-8")
    return folder


def test_an_attached_image_goes_with_the_next_message_and_shows_in_the_agent_buffer(tmp_path: Path):
    folder = pictures(tmp_path)
    agent, report = run_package(tmp_path, [{"text": "A red dot."}], [
        ["refused", ["attach", str(folder / "notes.png")]],
        ["refused", ["attach", str(folder / "gone.png")]],
        ["attach", str(folder / "shot.png")],
        ["ask", "what is this?"],
        ["wait", "— turn 1 completed"],
    ])
    assert agent.splitlines()[:3] == ["You: what is this?", f"  [image: shot.png, {len(PNG)} B]", "Agent: A red dot."]
    assert (f'errors: ("notes.png is not an image the models take (PNG, JPEG, GIF or WebP)" '
            f'"Cannot read the image {folder / "gone.png"}') in report
    (stored,) = (tmp_path / "sessions").rglob("*.files/*.png")
    assert stored.read_bytes() == PNG


def test_a_model_without_images_refuses_the_message_and_the_image_stays_attached(tmp_path: Path):
    folder = pictures(tmp_path)
    agent, report = run_package(tmp_path, [{"text": "Plain text it is."}], [
        ["attach", str(folder / "shot.png")],
        ["refused", ["ask", "what is this?"]],
        ["refused", ["ask", "and now?"]],  # still attached: refused again
        ["clear-attachments"],
        ["ask", "describe it in words"],
        ["wait", "— turn 1 completed"],
    ], settings={"model": {"provider": "scripted", "script": [{"text": "Plain text it is."}], "images": False}})
    refusal = ("The agent refused the message: the model scripted does not take images; choose another or remove "
               "the image (the images stay attached: M-x agent-lsp-clear-attachments removes them)")
    assert f'errors: ("{refusal}" "{refusal}")' in report
    assert agent.splitlines()[:2] == ["You: describe it in words", "Agent: Plain text it is."]


def test_in_a_graphical_frame_the_image_itself_shows_below_its_line(tmp_path: Path):
    folder = pictures(tmp_path)
    agent, _ = run_package(tmp_path, [{"text": "A red dot."}], [
        ["graphical"],
        ["attach", str(folder / "shot.png")],
        ["ask", "what is this?"],
        ["wait", f"<image png, {len(PNG)} bytes>"],  # its bytes, asked of the server (agent/session/file)
        ["wait", "— turn 1 completed"],
    ])
    lines = agent.splitlines()
    at = lines.index(f"  [image: shot.png, {len(PNG)} B]")
    assert lines[at + 1] == f"<image png, {len(PNG)} bytes>"
