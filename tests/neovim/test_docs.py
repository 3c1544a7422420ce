"""The vimdoc is valid (:helptags finds no duplicates) and documents every
command, <Plug> mapping and Lua function the plugin defines."""

from __future__ import annotations

import shutil
from pathlib import Path

from nvim_harness import PLUGIN_DIR, start_editor, stop_editor


def test_helptags_and_every_command_is_documented(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "agent_lsp"
    shutil.copytree(PLUGIN_DIR / "doc", copy / "doc")
    editor = start_editor(tmp_path, tmp_path / "home", monkeypatch)
    try:
        editor.cmd("helptags " + str(copy / "doc"))
        tags = {line.split("\t")[0] for line in (copy / "doc" / "tags").read_text().splitlines()}
        commands = editor.lua(
            "return vim.tbl_filter(function(n) return n:match('^Agent') end, "
            "vim.tbl_keys(vim.api.nvim_get_commands({})))"
        )
        # Both ways: every command is documented, and every documented command exists.
        documented = {t[1:] for t in tags if t.startswith(":Agent")}
        assert len(commands) >= 19 and set(commands) == documented
        missing = [c for c in commands if ":" + c not in tags]
        plugs = editor.lua(
            "local out = {} for _, m in ipairs(vim.list_extend(vim.api.nvim_get_keymap('n'), "
            "vim.api.nvim_get_keymap('x'))) do if m.lhs:match('^<Plug>%(Agent') then "
            "out[m.lhs] = true end end return vim.tbl_keys(out)"
        )
        missing += [p for p in plugs if p not in tags]
        missing += [t for t in ("agent_lsp.setup()", "agent_lsp.status()", "agent_lsp-config", "agent_lsp-chat",
                                "agent_lsp-permissions", "agent_lsp-health") if t not in tags]
        assert missing == []
        # No global mappings other than <Plug> ones.
        globals_ = editor.lua(
            "local out = {} for _, mode in ipairs({'n', 'x', 'i', 'v'}) do for _, m in ipairs(vim.api.nvim_get_keymap(mode)) do "
            "if (m.desc or ''):match('^agent_lsp') and not m.lhs:match('^<Plug>') then out[#out + 1] = m.lhs end end end "
            "return out"
        )
        assert globals_ == []
        # The shipped tags file is current, so a plain packpath install has :help without :helptags.
        assert (PLUGIN_DIR / "doc" / "tags").read_text() == (copy / "doc" / "tags").read_text()
        editor.lua("vim.opt.rtp:append(...)", str(PLUGIN_DIR))
        editor.cmd("help :AgentAsk")
        assert editor.lua("return vim.fn.expand('%:t')") == "agent_lsp.txt"
        editor.cmd("help agent_lsp")
        assert "*agent_lsp*" in editor.lua("return vim.api.nvim_get_current_line()")
    finally:
        stop_editor(editor)
