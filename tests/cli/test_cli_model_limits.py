"""A real (local, fake) OpenAI-compatible server at its limits, seen through
`agent-lsp run`: a reply cut at the output limit says which setting to raise;
a prompt too big for the context on its own is reported, not "compacted";
the window the server runs with is known from the first step, and one too
small for the agent's fixed prompt is refused before any request."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from cli_helpers import agent_lsp, clean_env

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
from llm_fake_server import FakeServer, Reply  # noqa: E402


def _sse(*chunks: dict) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _run_against(tmp_path: Path, replies: list[Reply], routes: dict[str, Reply] | None = None
                 ) -> tuple[str, str, FakeServer]:
    async def scenario():
        fake = FakeServer()
        await fake.start()
        fake.queue(*replies)
        fake.routes.update(routes or {})
        env = clean_env(tmp_path, OPENAI_BASE_URL=fake.url + "/v1", AGENT_LSP_MODEL="local-coder",
                        AGENT_LSP_SESSIONS_DIR=str(tmp_path / "sessions"))
        done = await asyncio.to_thread(agent_lsp, ["run", "hello", "-w", str(tmp_path)], env)
        await fake.stop()
        return done, fake

    done, fake = asyncio.run(scenario())
    return done.stdout, done.stderr, fake


def test_a_reply_cut_at_the_output_limit_says_what_to_raise(tmp_path: Path):
    cut = _sse({"choices": [{"index": 0, "delta": {"content": "Let me write a long "}, "finish_reason": None}]},
               {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
    stdout, stderr, _ = _run_against(tmp_path, [Reply.sse(cut)])
    assert "Let me write a long" in stdout
    assert "raise the model.maxOutputTokens setting" in stderr
    assert "(turn ended: max-tokens)" not in stderr


def test_a_prompt_too_big_on_its_own_is_not_compacted(tmp_path: Path):
    overflow = Reply.json(400, {"error": {"message": "the request exceeds the available context size",
                                          "type": "exceed_context_size_error"}})
    _, stderr, fake = _run_against(tmp_path, [overflow, overflow, overflow])
    assert len(fake.requests) == 1  # no summary request of the one message there is
    assert "compacted" not in stderr and "compacting" not in stderr
    assert "CONTEXT_WINDOW_EXCEEDED" in stderr


def test_compaction_is_announced_only_when_it_succeeded():
    import io

    from agent_lsp.cli.transcript import Transcript

    out, err = io.StringIO(), io.StringIO()
    transcript = Transcript(out, err, color=False)
    transcript.event({"type": "compaction/start", "data": {"compactionId": "c1"}})
    transcript.event({"type": "compaction/end", "data": {"compactionId": "c1", "error": {
        "message": "the summary is not smaller than what it replaces", "kind": "summary"}}})
    assert "was compacted" not in err.getvalue()
    assert "compacting older history failed: the summary is not smaller" in err.getvalue()
    transcript.event({"type": "compaction/end", "data": {"compactionId": "c2"}})
    assert "older history was compacted" in err.getvalue()


def _props(n_ctx: int) -> dict[str, Reply]:
    return {"GET /props": Reply.json(200, {"default_generation_settings": {"n_ctx": n_ctx}, "total_slots": 1})}


def _first_route(tmp_path: Path) -> dict:
    (log,) = (tmp_path / "sessions").glob("*/*.jsonl")
    events = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    return next(e["data"] for e in events if e["type"] == "request/context")


def test_the_first_step_of_a_fresh_run_knows_the_server_s_window(tmp_path: Path):
    stdout, _, fake = _run_against(tmp_path, [Reply.openai_text("hi there")], _props(32768))
    assert "hi there" in stdout
    assert _first_route(tmp_path)["contextWindow"] == 32768
    assert [p.path for p in fake.probes].count("/props") == 1


def test_a_window_too_small_for_the_fixed_prompt_is_refused_with_what_to_do(tmp_path: Path):
    _, stderr, fake = _run_against(tmp_path, [Reply.openai_text("never")], _props(1024))
    assert fake.requests == []  # nothing sent that the server would reject
    assert "context window (1024 tokens) is too small for this agent" in stderr
    assert "larger context" in stderr and "fewer tools" in stderr
