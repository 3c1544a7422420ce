"""The chat buffer highlights code fences in their own language (tree-sitter
injections), so code in an answer reads as code."""

from __future__ import annotations

from test_render import Feed, chat, nv, send  # noqa: F401  (fixtures)


def test_a_code_fence_in_an_answer_is_highlighted_in_its_language(chat) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("show me"), *f.text("Here:\n\n```lua\nlocal answer = 42\n```\n")])
    lines = chat.chat_lines()
    row = lines.index("local answer = 42")
    captures = chat.lua(
        """
        local buf, row = T.chat_buf(), ...
        local parser = vim.treesitter.get_parser(buf)
        parser:parse(true)
        local names = {}
        for _, c in ipairs(vim.treesitter.get_captures_at_pos(buf, row, 0)) do
          table.insert(names, c.lang .. ':' .. c.capture)
        end
        return { active = vim.treesitter.highlighter.active[buf] ~= nil, names = names }
        """,
        row,
    )
    assert captures["active"], "tree-sitter does not highlight the chat buffer"
    assert "lua:keyword" in captures["names"], captures["names"]
