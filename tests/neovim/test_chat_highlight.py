"""The chat buffer stays responsive while a long answer streams: by default it
is highlighted with Vim's markdown syntax, code fences in their language,
which works on the lines on screen; tree-sitter's markdown (it parses the
whole transcript at every change, which froze Neovim for up to a second at a
time) only when `chat.highlight = "treesitter"` asks for it. Real headless
Neovim with a UI attached, so redraws do their work."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from nvim_harness import Editor, start_editor, stop_editor

OPEN_CHAT = r"""
local chat_options = ...
require('agent_lsp').setup({ autostart = false, chat = chat_options })
local state, chat = require('agent_lsp.state'), require('agent_lsp.chat')
local c = state.client(1, vim.fn.getcwd())
local s = state.session('s', 1)
chat.set_session(c, s)
chat.open(c, false)
_G.seq = 0
function _G.ev(type_, data)
  _G.seq = _G.seq + 1
  return { seq = _G.seq, time = 0, type = type_, data = data }
end
state.add_events(s, { ev('turn/start', { turn = 1 }), ev('assistant/chunk', { chunk = { type = 'text-start' } }) })
"""

# `lines` lines of paragraphs, lists and python blocks, 10 per notification, each
# drawn before the next; returns the seconds it all took.
STREAM = r"""
local lines_total = ...
local state = require('agent_lsp.state')
local s = state.sessions.s
local t0 = vim.uv.hrtime()
local line = 0
while line < lines_total do
  local events = {}
  for _ = 1, 10 do
    line = line + 1
    local k, text = line % 40
    if k == 1 then text = '```python\n' elseif k == 16 then text = '```\n'
    elseif k < 16 then text = '    return compute(values, ' .. line .. ')\n'
    elseif k % 6 == 0 then text = '\n'
    else text = 'Prose with **bold**, `code` and a [link](https://example.com) ' .. line .. '.\n' end
    events[#events + 1] = ev('assistant/chunk', { chunk = { type = 'text-delta', text = text } })
  end
  state.add_events(s, events)
  vim.cmd('redraw')
end
state.add_events(s, { ev('assistant/chunk', { chunk = { type = 'text-end' } }) })
return (vim.uv.hrtime() - t0) / 1e9
"""

# What highlights the word `return` of the first code line, in the chat window.
HIGHLIGHT_AT_CODE = r"""
local buf = T.chat_buf()
local win = vim.fn.win_findbuf(buf)[1]
return vim.api.nvim_win_call(win, function()
  local row = vim.fn.search('^    return compute', 'nw')
  local col = vim.fn.getline(row):find('return')
  return { vim.treesitter.highlighter.active[buf] ~= nil, vim.bo[buf].syntax,
           vim.fn.synIDattr(vim.fn.synID(row, col, 1), 'name') }
end)
"""


@pytest.fixture
def editor(tmp_path: Path):
    mp = pytest.MonkeyPatch()
    ed = start_editor(tmp_path, tmp_path / "home", mp)
    ed.nvim.ui_attach(120, 40, rgb=True)
    yield ed
    stop_editor(ed)
    mp.undo()


def test_a_long_answer_streams_without_freezing_and_its_code_is_highlighted(editor: Editor):
    editor.nvim.exec_lua(OPEN_CHAT, {"position": "right"})  # the default highlighting
    started = time.monotonic()
    editor.nvim.exec_lua(STREAM, 1500)
    elapsed = time.monotonic() - started
    # with tree-sitter's markdown the same stream took about 9 s here (0.1 s without)
    assert elapsed < 4, f"a 1,500-line answer took {elapsed:.1f} s to stream"
    treesitter, syntax, group = editor.nvim.exec_lua(HIGHLIGHT_AT_CODE)
    assert not treesitter and syntax == "markdown"
    assert group.startswith("python"), group  # the fence's code in its language


def test_tree_sitter_highlights_the_chat_when_asked_to(editor: Editor):
    editor.nvim.exec_lua(OPEN_CHAT, {"highlight": "treesitter"})
    editor.nvim.exec_lua(STREAM, 40)
    treesitter, _, _ = editor.nvim.exec_lua(HIGHLIGHT_AT_CODE)
    assert treesitter
