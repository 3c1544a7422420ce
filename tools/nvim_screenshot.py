"""Screenshot of the Neovim chat (dev-only; writes docs/images/neovim-chat.png).

Runs the real Neovim from the test wheel in a pseudo-terminal with the plugin
and the real server (the scripted model answers), asks one question with
:AgentAsk, lets the answer stream in, then draws the terminal's screen (as
pyte emulates it) with Pillow.

    python3 -m venv /tmp/shots && /tmp/shots/bin/pip install pyte Pillow
    /tmp/shots/bin/python tools/nvim_screenshot.py --nvim .venv/.../nvim --python .venv/bin/python
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import struct
import tempfile
import termios
import time
from pathlib import Path

import pyte
from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parents[1]
COLS, ROWS = 120, 34
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
PALETTE = {  # the 16 terminal colours pyte names, in a dark scheme
    "black": "#1e1e2e", "red": "#f38ba8", "green": "#a6e3a1", "brown": "#f9e2af", "blue": "#89b4fa",
    "magenta": "#cba6f7", "cyan": "#94e2d5", "white": "#cdd6f4", "default": "#cdd6f4",
}
BACKGROUND = "#1e1e2e"

SCRIPT = [
    {"text": "Reading stats.py.", "tools": [{"name": "read_file", "arguments": {"path": "stats.py"}}]},
    {"text": "The divisor is one too small.", "tools": [{"name": "edit_file", "arguments": {
        "path": "stats.py", "edits": [{"oldText": "(len(values) - 1)", "newText": "len(values)"}]}}]},
    {"text": "Fixed `mean()`: it divided by one less than the count.\n\n```python\ndef mean(values):\n"
             "    return sum(values) / len(values)\n```\n\nRun `pytest` to check it.", "chunkDelayMs": 5},
]


def colour(name: str, default: str) -> str:
    if name == "default":
        return default
    return PALETTE.get(name, f"#{name}" if len(name) == 6 else default)


def render(screen: pyte.Screen, out: Path) -> None:
    font = ImageFont.truetype(FONT, 15)
    bold = ImageFont.truetype(FONT.replace(".ttf", "-Bold.ttf"), 15)
    w, h = font.getbbox("M")[2], 19
    image = Image.new("RGB", (COLS * w + 16, ROWS * h + 16), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for y in range(ROWS):
        line = screen.buffer[y]
        for x in range(COLS):
            char = line[x]
            fg, bg = colour(char.fg, PALETTE["default"]), colour(char.bg, BACKGROUND)
            if char.reverse:
                fg, bg = bg, fg
            left, top = 8 + x * w, 8 + y * h
            if bg != BACKGROUND:
                draw.rectangle([left, top, left + w, top + h], fill=bg)
            if char.data.strip():
                draw.text((left, top), char.data, font=bold if char.bold else font, fill=fg)
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nvim", required=True)
    parser.add_argument("--python", required=True, help="a Python that has agent_lsp")
    parser.add_argument("--out", default=str(REPO / "docs" / "images" / "neovim-chat.png"))
    args = parser.parse_args()
    args.nvim = str(Path(args.nvim).resolve())
    work = Path(tempfile.mkdtemp(prefix="nvim-shot-"))
    (work / "stats.py").write_text("def mean(values):\n    return sum(values) / (len(values) - 1)\n")
    (work / ".git").mkdir()
    settings = {"model": {"provider": "scripted", "script": SCRIPT}, "sessionsDir": str(work / ".sessions")}
    init = work / "init.lua"
    init.write_text(f"""
vim.opt.runtimepath:prepend({json.dumps(str(REPO / 'editors' / 'neovim'))})
vim.o.termguicolors = true
vim.o.laststatus = 3
vim.cmd.colorscheme('habamax')
require('agent_lsp').setup({{
  cmd = {{ {json.dumps(args.python)}, '-m', 'agent_lsp' }},
  settings = vim.json.decode({json.dumps(json.dumps(settings))}),
}})
vim.o.statusline = ' %f %= %{{v:lua.require("agent_lsp").status()}} '
""")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("AGENT_LSP_")}
    env.update(TERM="xterm-256color", COLORTERM="truecolor", HOME=str(work), XDG_CONFIG_HOME=str(work / "config"),
               XDG_DATA_HOME=str(work / "data"), XDG_STATE_HOME=str(work / "state"))
    screen = pyte.Screen(COLS, ROWS)
    stream = pyte.ByteStream(screen)
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(work)
        os.execvpe(args.nvim, [args.nvim, "--clean", "-u", str(init), "stats.py"], env)
    os.set_blocking(fd, False)
    # The pty's size, before nvim draws.
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))

    def pump(seconds: float) -> None:
        until = time.time() + seconds
        while time.time() < until:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    stream.feed(os.read(fd, 65536))
                except OSError:
                    return

    pump(4)
    os.write(fd, b":AgentAsk mean() is wrong, fix it\r")
    pump(12)
    os.write(fd, b"\x0c")  # Ctrl-L: a clean redraw
    pump(1)
    render(screen, Path(args.out))
    os.write(fd, b"\x1b:qa!\r")
    pump(1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
