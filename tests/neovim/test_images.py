"""Images in Neovim, against the real server: :AgentAttach attaches an image file
to the next message, the chat shows it as an `[image: name, size]` line that
:AgentImage opens (its bytes from the server), a file that is not an image is
named at once, and a model that takes no images is refused with the server's
words while the attachment stays to remove or send again."""

from __future__ import annotations

import base64
from pathlib import Path

from nvim_harness import SERVER_CMD, Editor

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def notes(editor: Editor) -> list[str]:
    return [n["msg"] for n in editor.lua("return _G.test_notes")]


def test_an_attached_image_goes_with_the_next_message_and_opens_from_the_chat(
        editor: Editor, tmp_path: Path, sessions_dir: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "notes.png").write_text("just text", encoding="utf-8")
    editor.setup([{"text": "a red dot"}], sessions_dir=sessions_dir)
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd(f"AgentAttach {tmp_path / 'notes.png'}")
    editor.cmd(f"AgentAttach {tmp_path / 'gone.png'}")
    assert editor.errors() == ["agent_lsp: notes.png is not an image the models take (PNG, JPEG, GIF or WebP)",
                               f"agent_lsp: cannot read the image {tmp_path / 'gone.png'}"]
    editor.cmd(f"AgentAttach {tmp_path / 'shot.png'}")
    assert notes(editor)[-1] == f"agent_lsp: attached shot.png ({len(PNG)} B) to your next message (:AgentAttach! removes it)"
    editor.cmd("AgentAsk what is this?")
    editor.wait_idle()
    lines = editor.chat_lines()
    you = lines.index("## You")
    assert lines[you + 2:you + 4] == ["what is this?", f"[image: shot.png, {len(PNG)} B]"]
    stored = list(sessions_dir.rglob("*.files/*.png"))
    assert len(stored) == 1 and stored[0].read_bytes() == PNG
    editor.cmd("AgentAttach")  # sent: nothing is attached any more
    assert notes(editor)[-1] == "agent_lsp: no image is attached: :AgentAttach {file}"

    # :AgentImage on the line opens the image the server kept
    editor.lua("_G.opened = nil; vim.ui.open = function(path) _G.opened = path end")
    editor.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(T.chat_buf())[1])")
    editor.lua(f"vim.api.nvim_win_set_cursor(0, {{{you + 4}, 0}})")
    editor.cmd("AgentImage")
    editor.wait("_G.opened ~= nil", what="the image to open")
    assert Path(editor.lua("return _G.opened")).read_bytes() == PNG


def test_a_model_without_images_is_refused_and_the_attachment_stays(editor: Editor, tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    editor.lua("require('agent_lsp').setup(...)", {"cmd": SERVER_CMD, "settings": {
        "model": {"provider": "scripted", "script": [{"text": "fine"}], "images": False}}})
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd(f"AgentAttach {tmp_path / 'shot.png'}")
    editor.cmd("AgentAsk what is this?")
    editor.wait("#T.errors() > 0", what="the refusal")
    assert "the model scripted does not take images; choose another or remove the image" in editor.errors()[0]
    editor.cmd("AgentAttach")
    assert notes(editor)[-1] == f"agent_lsp: attached to your next message: shot.png ({len(PNG)} B) (:AgentAttach! removes them)"
    editor.cmd("AgentAttach!")
    assert notes(editor)[-1] == f"agent_lsp: removed shot.png ({len(PNG)} B)"
    editor.cmd("AgentAsk what is this?")
    editor.wait_idle()
    assert "fine" in editor.chat_lines()


def test_agent_retry_sends_the_failed_messages_image_again(editor: Editor, tmp_path: Path, sessions_dir: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    editor.setup([{"fail": "AUTH", "message": "the key was refused"}, {"text": "a red dot"}], sessions_dir=sessions_dir)
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd(f"AgentAttach {tmp_path / 'shot.png'}")
    editor.cmd("AgentAsk what is this?")
    editor.wait_idle()
    editor.cmd("AgentRetry")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle' "
                "and T.session().events[#T.session().events].type == 'turn/end'", what="the retried turn")
    lines = editor.chat_lines()
    assert lines.count(f"[image: shot.png, {len(PNG)} B]") == 2 and "a red dot" in lines
    assert editor.errors() == []
    messages = editor.lua("""local out = {}
      for _, ev in ipairs(T.session().events) do
        if ev.type == 'user/message' and ev.data.message.source == 'user' then out[#out + 1] = ev.data.message.content end
      end
      return out""")
    assert messages[0] == messages[1] and [b["type"] for b in messages[1]] == ["text", "text", "image"]


def test_the_clipboards_image_is_attached_with_a_plus(editor: Editor, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shot = tmp_path / "shot.png"
    paste = bin_dir / "wl-paste"  # what Wayland's clipboard program prints: the image, or nothing and a failure
    paste.write_text(f"#!/bin/sh\n[ -f {shot} ] && exec cat {shot}\nexit 1\n")
    paste.chmod(0o755)
    editor.setup([{"text": "a red dot"}])
    editor.lua(f"vim.env.PATH = '{bin_dir}:' .. vim.env.PATH")
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAttach +")
    assert editor.errors() == ["agent_lsp: the clipboard holds no image (wl-paste)"]
    shot.write_bytes(PNG)
    editor.cmd("AgentAttach +")
    assert notes(editor)[-1] == (f"agent_lsp: attached clipboard image 1 ({len(PNG)} B) to your next message "
                                 "(:AgentAttach! removes it)")
    editor.cmd("AgentAsk what is this?")
    editor.wait_idle()
    assert f"[image: clipboard image 1, {len(PNG)} B]" in editor.chat_lines()
