"""The chat transcript, fed with session events the way the server sends them
(no server needed): folds, parallel tool calls, errors, the winbar, the cursor."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvim_harness import Editor, start_editor, stop_editor


@pytest.fixture(scope="module")
def nv(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    ws = tmp_path_factory.mktemp("ws")
    ed = start_editor(ws, Path(tmp_path_factory.mktemp("home")), mp)
    ed.lua("require('agent_lsp').setup({ autostart = false })")
    yield ed
    stop_editor(ed)
    mp.undo()


@pytest.fixture
def chat(nv: Editor):
    """A chat window showing a fresh session "s" of a (serverless) client state."""
    nv.lua(
        """
        vim.cmd('silent! only')
        local state, chat = require('agent_lsp.state'), require('agent_lsp.chat')
        for id, c in pairs(state.clients) do
          if c.chat_buf then pcall(vim.api.nvim_buf_delete, c.chat_buf, { force = true }) end
          state.clients[id] = nil
        end
        state.sessions = {}
        local c = state.client(1000, vim.fn.getcwd())
        local s = state.session('s', 1000)
        chat.set_session(c, s)
        chat.open(c, false)
        """
    )
    return nv


class Feed:
    def __init__(self) -> None:
        self.seq = 0

    def __call__(self, type_: str, **data) -> dict:
        ev = {"seq": self.seq, "time": 0, "type": type_, "data": data}
        self.seq += 1
        return ev

    def text(self, text: str) -> list[dict]:
        return [self("assistant/chunk", chunk={"type": "text-start"}),
                *[self("assistant/chunk", chunk={"type": "text-delta", "text": t}) for t in text],
                self("assistant/chunk", chunk={"type": "text-end"})]

    def user(self, text: str) -> dict:
        return self("user/message", message={"role": "user", "id": f"m{self.seq}", "source": "user",
                                             "content": [{"type": "text", "text": text}]})


def send(nv: Editor, events: list[dict]) -> None:
    nv.lua("local state = require('agent_lsp.state') state.add_events(state.sessions.s, ...)", events)


def chat_win(nv: Editor) -> int:
    return nv.lua("return vim.fn.win_findbuf(T.chat_buf())[1]")


def foldclosed(nv: Editor, lnum: int) -> int:
    return nv.lua(f"return vim.api.nvim_win_call({chat_win(nv)}, function() return vim.fn.foldclosed({lnum}) end)")


def test_parallel_tool_calls_each_show_their_result_in_a_closed_fold(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("look"), *f.text("Looking."),
                f("tool/call", callId="c1", name="read_file", arguments='{"path": "a.py"}'),
                f("tool/call", callId="c2", name="grep", arguments='{"pattern": "TODO"}')])
    lines = chat.chat_lines()
    assert lines[-2:] == ["▸ ⋯ read_file a.py", "▸ ⋯ grep TODO"]
    # The second result arrives first; each lands under its own header.
    send(chat, [f("tool/result", callId="c2", message={"role": "tool", "callId": "c2", "name": "grep",
                                                      "content": [{"type": "text", "text": "x.py:3: TODO"}]}),
                f("tool/result", callId="c1", message={"role": "tool", "callId": "c1", "name": "read_file",
                                                      "content": [{"type": "text", "text": "1\tone\n2\ttwo"}],
                                                      "isError": True}, error={"code": "X", "message": "boom"})])
    lines = chat.chat_lines()
    start = lines.index("▸ ✗ read_file a.py")
    assert lines[start:] == ["▸ ✗ read_file a.py", "  ```", "  1\tone", "  2\ttwo", "  ```",
                             "▸ ✓ grep TODO", "  ```", "  x.py:3: TODO", "  ```"]
    assert foldclosed(chat, start + 1) == start + 1
    assert foldclosed(chat, start + 6) == start + 6
    assert foldclosed(chat, start) == -1  # the text before is not folded


def test_reasoning_is_folded_and_text_streams_after_it(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("q"),
                f("assistant/chunk", chunk={"type": "reasoning-start"}),
                f("assistant/chunk", chunk={"type": "reasoning-delta", "text": "step one\nstep "}),
                f("assistant/chunk", chunk={"type": "reasoning-delta", "text": "two"}),
                f("assistant/chunk", chunk={"type": "reasoning-end"}), *f.text("Answer.")])
    lines = chat.chat_lines()
    assert lines[-6:] == ["## Agent", "", "▸ thinking", "  step one", "  step two", "", "Answer."][-6:]
    header = lines.index("▸ thinking") + 1
    assert foldclosed(chat, header) == header


def test_streaming_never_moves_the_cursor_of_the_user_in_the_chat(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("line one\nline two\nline three"), *f.text("first")[:-1]])
    chat.lua(f"vim.api.nvim_set_current_win({chat_win(chat)}) vim.api.nvim_win_set_cursor(0, {{3, 2}})")
    send(chat, [f("assistant/chunk", chunk={"type": "text-delta", "text": " more\nand a new line"}),
                f("assistant/chunk", chunk={"type": "text-end"})])
    assert chat.lua("return vim.api.nvim_win_get_cursor(0)") == [3, 2]
    assert chat.chat_lines()[-2:] == ["first more", "and a new line"]


def test_errors_retries_and_interruptions_show_in_place(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("q"), *f.text("partial"),
                f("llm/retry", retry=1, delayMs=500, failure={"code": "RATE_LIMIT", "message": "slow down"}),
                *f.text("second try"),
                f("llm/retry", retry=2, delayMs=5, failure={"code": "OVERLOADED", "message": "busy"}),
                f("turn/end", turn=1, reason={"kind": "error", "error": {"code": "AUTH", "message": "bad key"}}),
                f("turn/start", turn=2), f.user("again"), *f.text("cut"),
                f("assistant/message", message={"role": "assistant", "content": [], "interrupted": True}),
                f("turn/end", turn=2, reason={"kind": "aborted", "reason": {"kind": "user"}})])
    text = chat.chat_text()
    assert "partial\n\n_↻ RATE_LIMIT: retrying in 0.5 s (retry 1)_\n\nsecond try" in text
    assert "_↻ OVERLOADED: retrying (retry 2)_" in text  # not "in 0.0 s"
    assert "**Error** `AUTH`: bad key" in text
    assert text.endswith("cut\n\n_(interrupted)_\n\n_⏹ cancelled_")


def test_the_winbar_shows_status_turn_context_and_queue(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=3), f("request/context", provider="p", model="m", contextWindow=200000),
                f("assistant/message", message={"role": "assistant", "content": []},
                  usage={"inputTokens": 12000, "outputTokens": 500})])
    chat.lua(
        """
        local state = require('agent_lsp.state')
        local s = state.sessions.s
        state.set_status(s, 'running')
        state.inbox_change(s, 'inserted', { target = 'next-turn', message = { id = 'q1' } })
        """
    )
    bar = chat.lua("return require('agent_lsp.chat').winbar_text(require('agent_lsp.state').sessions.s)")
    assert bar == " ● running │ turn 3 │ ctx 12.5k/200k 6% │ ↑12k ↓500 │ 1 queued"
    assert chat.lua(f"return require('agent_lsp').status({chat.lua('return T.chat_buf()')})") == \
        "agent running (1 queued)"


def test_compaction_checkpoint_is_not_shown_as_a_user_message(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("hello"), *f.text("hi"),
                f("compaction/start", compactionId="k", turn=1),
                f("user/message", message={"role": "user", "id": "sum", "source": "compaction",
                                           "content": [{"type": "text", "text": "SUMMARY OF EARLIER WORK"}]},
                  surfaceOp={"kind": "replace", "start": 1, "end": 3}),
                f("compaction/end", compactionId="k", turn=1)])
    text = chat.chat_text()
    assert "SUMMARY OF EARLIER WORK" not in text
    assert text.endswith("_— earlier context compacted —_")


def test_a_long_streamed_paragraph_stays_in_view_as_it_wraps(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("q"), *f.text("start")[:-1]])
    win = chat_win(chat)
    assert chat.lua("return vim.api.nvim_get_current_win()") != win  # the user is elsewhere
    # One paragraph, much longer than the narrow window holds once wrapped.
    words = " ".join(f"word{i}" for i in range(400))
    for i in range(0, len(words), 50):
        send(chat, [f("assistant/chunk", chunk={"type": "text-delta", "text": words[i:i + 50]})])
    chat.cmd("redraw")
    last = chat.lua("return vim.api.nvim_buf_line_count(T.chat_buf())")
    end_col = len(chat.chat_lines()[-1])
    # The end of the text is on screen (row 0 means not visible).
    assert chat.lua(f"return vim.fn.screenpos({win}, {last}, {end_col}).row") > 0


def test_the_winbar_shows_no_token_counts_before_the_turn_has_any(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f("request/context", provider="p", model="m", contextWindow=1000),
                f("assistant/message", message={"role": "assistant", "content": []},
                  usage={"inputTokens": 100, "outputTokens": 20}),
                f("turn/end", turn=1, reason={"kind": "stop"}),
                f("turn/start", turn=2)])
    bar = chat.lua("return require('agent_lsp.chat').winbar_text(require('agent_lsp.state').sessions.s)")
    assert bar == " idle │ turn 2 │ ctx 120/1k 12%"


def test_the_winbar_shows_the_fixed_prompt_s_share_of_the_window_from_the_first_request(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1),
                f("request/context", provider="p", model="m", contextWindow=4096, fixedTokens=1189)])
    bar = chat.lua("return require('agent_lsp.chat').winbar_text(require('agent_lsp.state').sessions.s)")
    assert bar.endswith("│ turn 1 │ ctx 1.2k/4.1k 29% fixed 1.2k")


def test_a_running_command_shows_its_latest_output_line_in_the_folded_header(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("q"),
                f("tool/call", callId="c1", name="run_command", arguments='{"command": "make"}')])
    progress = "local s = require('agent_lsp.state').sessions.s require('agent_lsp.chat').tool_progress(s, 'c1', ...)"
    chat.lua(progress, {"stream": "stdout", "text": "compiling a.c\n"})
    chat.lua(progress, {"stream": "stdout", "text": "compiling b.c\n"})
    lines = chat.chat_lines()
    start = lines.index("▸ ⋯ run_command make · compiling b.c")
    assert lines[start + 1:] == ["  │ compiling a.c", "  │ compiling b.c"]
    assert foldclosed(chat, start + 1) == start + 1
    send(chat, [f("tool/result", callId="c1", message={"role": "tool", "callId": "c1", "name": "run_command",
                                                      "content": [{"type": "text", "text": "done"}]},
                  meta={"exitCode": 0})])
    assert chat.chat_lines()[start:] == ["▸ ✓ run_command make · exit 0", "  ```", "  done", "  ```"]


def test_a_merged_chunk_covers_its_seq_range_so_a_replayed_delta_is_not_drawn_twice(chat: Editor) -> None:
    f = Feed()
    start = [f("turn/start", turn=1), f.user("q"), f("assistant/chunk", chunk={"type": "text-start"})]
    deltas = [f("assistant/chunk", chunk={"type": "text-delta", "text": t}) for t in ("ab", "cd", "ef")]
    merged = dict(deltas[0], lastSeq=deltas[-1]["seq"], data={"chunk": {"type": "text-delta", "text": "abcdef"}})
    send(chat, [*start, merged])
    # The same deltas again, unmerged (a load answer racing the live stream), then the rest.
    send(chat, [*deltas[1:], f("assistant/chunk", chunk={"type": "text-delta", "text": "!"})])
    assert chat.chat_lines()[-1] == "abcdef!"
    assert chat.lua("return require('agent_lsp.state').sessions.s.last_seq") == f.seq - 1


def test_the_plan_is_a_checklist_and_a_subagent_a_card_with_its_live_status(chat: Editor) -> None:
    f = Feed()
    items = [{"content": "read calc.py", "status": "completed"}, {"content": "fix add()", "status": "in_progress"},
             {"content": "run the tests", "status": "pending"}]
    send(chat, [f("session/mode", mode="plan", previous="default"), f("turn/start", turn=1), f.user("plan it"),
                f("tool/call", callId="t1", name="todo_write", arguments="{}"),
                f("plan/update", turn=1, step=1, callId="t1", items=items),
                f("tool/call", callId="sa", name="subagent",
                  arguments='{"description": "survey the tests", "task": "look"}'),
                f("subagent/start", turn=1, step=1, callId="sa", childSessionId="child1",
                  description="survey the tests")])
    text = chat.lua("return T.chat_text()")
    assert "_⏸ plan mode: the agent reads and plans, edits and commands are refused_" in text
    assert "**Plan** (1/3 done)\n- [x] read calc.py\n- [~] fix add()\n- [ ] run the tests" in text
    assert "▸ ⋯ subagent survey the tests" in text
    chat.lua("require('agent_lsp.subagents').on_status(require('agent_lsp.state').sessions.s, ...)",
             {"sessionId": "s", "callId": "sa", "childSessionId": "child1", "description": "survey the tests",
              "status": "running"})
    assert "▸ ⋯ subagent survey the tests · sub-agent running · :AgentSubagent" in chat.lua("return T.chat_text()")
    send(chat, [f("tool/result", callId="sa", name="subagent",
                  message={"role": "tool", "callId": "sa", "name": "subagent",
                           "content": [{"type": "text", "text": "the tests pass"}]},
                  meta={"subagent": {"sessionId": "child1", "status": "completed", "description": "survey the tests",
                                     "usage": {}}})])
    lines = chat.lua("return T.chat_lines()")
    header = next(n for n, line in enumerate(lines) if line.startswith("▸ ✓ subagent survey the tests"))
    assert lines[header] == "▸ ✓ subagent survey the tests · sub-agent completed · :AgentSubagent"
    assert "the tests pass" in "\n".join(lines[header:])
    assert foldclosed(chat, header + 2) == header + 1  # the card is a closed fold, its report inside
    assert chat.lua("return require('agent_lsp.render').get(T.chat_buf()):subagent_near(1000)") == "child1"
    assert chat.lua("return require('agent_lsp.chat').winbar_text(require('agent_lsp.state').sessions.s)").count(
        "plan mode") == 1


def test_opening_one_section_leaves_later_sections_closed_and_keeps_its_own_state(chat: Editor) -> None:
    # `zo` on one tool section must not make every later section render open,
    # and the section the user opened stays open when its result arrives.
    f = Feed()

    def call(call_id: str, path: str) -> dict:
        return f("tool/call", callId=call_id, name="read_file", arguments=f'{{"path": "{path}"}}')

    def result(call_id: str) -> dict:
        return f("tool/result", callId=call_id, message={"role": "tool", "callId": call_id, "name": "read_file",
                                                           "content": [{"type": "text", "text": "1\tone\n2\ttwo"}]})

    send(chat, [f("turn/start", turn=1), f.user("look"), *f.text("Looking."), call("c1", "a.py"), result("c1"),
                call("c2", "b.py")])
    first = chat.chat_lines().index("▸ ✓ read_file a.py") + 1
    win = chat_win(chat)
    chat.lua(f"vim.api.nvim_win_call({win}, function() vim.api.nvim_win_set_cursor(0, {{{first}, 0}}) vim.cmd('normal! zo') end)")
    assert foldclosed(chat, first) == -1
    second = chat.chat_lines().index("▸ ⋯ read_file b.py") + 1
    chat.lua(f"vim.api.nvim_win_call({win}, function() vim.api.nvim_win_set_cursor(0, {{{second}, 0}}) vim.cmd('normal! zo') end)")
    send(chat, [result("c2"), call("c3", "c.py"), result("c3"), *f.text("Done.")])
    lines = chat.chat_lines()
    second, third = lines.index("▸ ✓ read_file b.py") + 1, lines.index("▸ ✓ read_file c.py") + 1
    assert foldclosed(chat, first) == -1, "the section the user opened stays open"
    assert foldclosed(chat, second + 1) == -1, "opened while running, still open with its result"
    assert foldclosed(chat, third + 1) == third, "a later section starts closed"



def test_the_winbar_shows_the_sessions_estimated_cost_and_cached_tokens(chat: Editor) -> None:
    f = Feed()
    total = {"inputTokens": 4000, "outputTokens": 300, "cacheReadTokens": 2000, "cacheWriteTokens": 0,
             "reasoningTokens": 50, "costUsd": 0.0074}
    send(chat, [f("turn/start", turn=1), f.user("q"), *f.text("a"),
                f("assistant/message", message={"role": "assistant", "content": []},
                  usage={"inputTokens": 3000, "outputTokens": 200}),
                f("turn/end", turn=1, reason={"kind": "completed"}, usage=total, sessionUsage=total)])
    bar = chat.lua("return require('agent_lsp.chat').winbar_text(require('agent_lsp.state').sessions.s)")
    assert bar.endswith("│ session ~$0.0074 est. 2k cached")


def test_the_runtime_context_the_server_told_the_model_is_not_shown_as_a_user_message(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("hello"),
                f("user/message", message={"role": "user", "id": "rc", "source": "runtime-context",
                                           "content": [{"type": "text", "text": "- Files open in the editor: a.py"}]}),
                *f.text("hi")])
    text = chat.chat_text()
    assert "hello" in text and "Files open in the editor" not in text


def test_a_code_fence_in_an_answer_is_highlighted_in_its_language(chat: Editor) -> None:
    f = Feed()
    send(chat, [f("turn/start", turn=1), f.user("show me"), *f.text("Here:\n\n```lua\nlocal answer = 42\n```\n")])
    lines = chat.chat_lines()
    row = lines.index("local answer = 42")
    group = chat.lua(
        """
        local buf, row = T.chat_buf(), ...
        return vim.api.nvim_win_call(vim.fn.win_findbuf(buf)[1], function()
          return vim.fn.synIDattr(vim.fn.synID(row + 1, 1, 1), 'name')
        end)
        """,
        row,
    )
    # Vim's markdown syntax, the fence in its language (tree-sitter's when chat.highlight asks)
    assert group.startswith("lua"), group
