""":AgentModel against the real server and a real local HTTP model server:
completion and the picker offer the configured and the endpoint's models, and
a switch changes the model of the next request."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import pytest

from nvim_harness import Editor

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))

from llm_fake_server import FakeServer, Reply  # noqa: E402


def reply(text: str) -> Reply:
    return Reply.openai_text(text)


@pytest.fixture
def model_server():
    """A FakeServer on an event loop of its own (the Neovim tests are synchronous)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    fake = FakeServer()
    asyncio.run_coroutine_threadsafe(fake.start(), loop).result(5)
    fake.routes["GET /v1/models"] = Reply.json(200, {"data": [{"id": "house-model"}, {"id": "gpt-4o-mini"}]})
    yield fake

    async def stop() -> None:  # the server's connections end with it
        await fake.stop()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run_coroutine_threadsafe(stop(), loop).result(5)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_agent_model_completes_picks_and_switches(model_server: FakeServer, editor: Editor) -> None:
    model_server.queue(reply("first answer"), reply("second answer"), reply("third answer"))
    editor.setup(settings={"model": {"provider": "openai", "model": "house-model", "baseUrl": model_server.url + "/v1",
                                     "apiKey": "k", "contextWindow": 8000}})
    editor.edit("a.py")
    editor.wait_attached()
    editor.cmd("AgentAsk hello")
    editor.wait_idle()

    assert editor.lua("return vim.fn.getcompletion('AgentModel ', 'cmdline')") == ["house-model", "gpt-4o-mini"]
    assert editor.lua("return vim.fn.getcompletion('AgentModel gpt', 'cmdline')") == ["gpt-4o-mini"]
    assert editor.lua("return vim.fn.getcompletion('AgentModel gpt-4o-mini ', 'cmdline')") == [
        "minimal", "low", "medium", "high"]

    editor.cmd("AgentModel gpt-4o-mini low")
    editor.wait("vim.iter(T.session().events):any(function(e) return e.type == 'session/model' end)", what="the switch")
    switched = "_⇄ model: openai gpt-4o-mini (effort low), was house-model_"
    editor.wait(f"vim.iter(T.chat_lines()):any(function(l) return l == '{switched}' end)", what="the switch in the chat")
    editor.cmd("AgentAsk again")
    editor.wait("T.session().turn == 2 and T.session().status == 'idle'", what="turn 2")
    editor.wait_idle()

    # the picker: every offered model, labelled; choosing one switches back
    editor.lua("T.stub_select('openai house-model')")
    editor.cmd("AgentModel")
    editor.wait("#vim.tbl_filter(function(e) return e.type == 'session/model' end, T.session().events) == 2",
                what="the second switch")
    (picker,) = editor.lua("return _G.test_selects")
    assert picker["labels"] == ["openai house-model  8k tokens  (configured)",
                                "openai gpt-4o-mini  128k tokens  (endpoint)"]
    editor.cmd("AgentAsk once more")
    editor.wait("T.session().turn == 3 and T.session().status == 'idle'", what="turn 3")
    editor.wait_idle()

    bodies = [r.body for r in model_server.requests]
    assert [b["model"] for b in bodies] == ["house-model", "gpt-4o-mini", "house-model"]
    assert bodies[1]["reasoning_effort"] == "low" and "reasoning_effort" not in bodies[2]
    assert editor.errors() == []
