"""The recorded session (tests/fixtures/session.json, a real run through the
real server) replayed into the Neovim chat through the plugin's own
notification handlers: as streamed (merged chunks and all) it draws what the
load answer draws, and it shows every part of the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvim_harness import Editor, start_editor, stop_editor

RECORDING = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "session.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def nv(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    ed = start_editor(tmp_path_factory.mktemp("ws"), Path(tmp_path_factory.mktemp("home")), mp)
    ed.lua("require('agent_lsp').setup({ autostart = false })")
    yield ed
    stop_editor(ed)
    mp.undo()


REPLAY = """
local sid, notifications = ...
local state, chat, handlers = require('agent_lsp.state'), require('agent_lsp.chat'), require('agent_lsp.handlers').all()
local c = state.client(1000, vim.fn.getcwd())
chat.set_session(c, state.session(sid, 1000))
chat.open(c, false)
for _, n in ipairs(notifications) do
  handlers[n[1]](nil, n[2], { client_id = 1000, method = n[1] })
end
"""


def test_the_recorded_session_streams_and_reloads_to_the_same_chat(nv: Editor) -> None:
    sid = RECORDING["sessionId"]
    nv.lua(REPLAY, sid, RECORDING["notifications"])
    streamed = nv.chat_lines()
    load = RECORDING["load"]
    assert nv.lua("return require('agent_lsp.state').sessions[...].last_seq", sid) == load["events"][-1]["seq"]
    nv.lua("local s = require('agent_lsp.state').sessions[select(1, ...)] "
           "require('agent_lsp.state').reset_events(s, select(2, ...), select(3, ...), select(4, ...))",
           sid, load["events"], load["status"], load["inbox"])
    assert nv.chat_lines() == streamed

    text = "\n".join(streamed)
    for expected in ("Fix add() in calc.py", "Anything else?", "Now refactor it", "Reading both files.",
                     "Two files to read first.", "read_file calc.py", "read_file notes.md", "edit_file calc.py",
                     "▸ ✗ run_command pytest -q · denied", "Answer after the retry.", "↻ RATE_LIMIT: retrying",
                     "Working on it", "⏹ cancelled", "earlier context compacted",
                     "↺ reverted turn 1: /home/user/project/calc.py"):
        assert expected in text, f"{expected!r} is not in the chat:\n{text}"
    assert text.count("Reading both files.") == 1  # a merged chunk is drawn once
