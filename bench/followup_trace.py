"""Which of our files a warm `agent/followup` runs through: prints them, asserts nothing.

    .venv/bin/python bench/followup_trace.py [--deltas 3]

The real server (`python -m agent_lsp.lsp`, provider `openai` pointed at a
local HTTP SSE server of bench/server_relay.py) answers a first followup of a
session; then a second one is traced: from the moment the server reads it to
the moment it sends `agent/status idle`, every Python function call on the
event loop's thread (where the request, the turn, the model stream and the
relay run) and in threads started meanwhile is noted (`sys.setprofile`;
the stdin reader and stdout writer threads only move bytes), and the files of agent_lsp they belong to
are printed in the order they were first entered. That is what a reader
follows from the wire to the model request and back to the notification.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from server_relay import Client, _model_server  # noqa: E402

TARGET_FILES = 9  # the face's handler, the application service both faces share, then the agent's way

# Runs in the server process: traces between the second followup read and the next idle.
TRACER = r"""
import json, os, sys, threading
import agent_lsp
from agent_lsp.lsp import rpc

package = os.path.dirname(agent_lsp.__file__) + os.sep
seen, state = {}, {"followups": 0, "on": False}
# where the journey passes: the request reaching the agent, the model request,
# a chunk reaching the relay (and, in traced_notify, the notification leaving)
WATCH = {("agent/agent.py", "followup"), ("llm/transport.py", "stream_sse"), ("lsp/relay.py", "durable")}
path, watched = {}, set()

def note_stack(frame):
    # our files on the stack, down to the event loop (what runs the loop is not the journey)
    stack = []
    while frame is not None and frame.f_code.co_name != "_run_once":
        if frame.f_code.co_filename.startswith(package):
            stack.append(frame.f_code.co_filename)
        frame = frame.f_back
    for file in reversed(stack):
        path.setdefault(file, len(path))

def profile(frame, event, arg):
    if event == "call":
        name = frame.f_code.co_filename
        if name.startswith(package):
            if name not in seen:
                seen[name] = len(seen)
            where = (name[len(package):], frame.f_code.co_name)
            if where in WATCH and where not in watched:
                watched.add(where)
                note_stack(frame)

def start():
    state["on"] = True
    threading.setprofile(profile)  # threads started from now on
    sys.setprofile(profile)  # the event loop's thread, where requests, the turn and the relay run

def stop():
    sys.setprofile(None)
    threading.setprofile(None)
    state["on"] = False
    root = os.path.dirname(package.rstrip(os.sep))
    # written whole, then renamed: the benchmark reads it as soon as it exists
    with open(os.environ["TRACE_OUT"] + ".part", "w") as f:
        json.dump({"executed": [os.path.relpath(n, root) for n in seen],
                   "path": [os.path.relpath(n, root) for n in path]}, f)
    os.replace(os.environ["TRACE_OUT"] + ".part", os.environ["TRACE_OUT"])

receive = rpc.AgentProtocol.receive
def traced_receive(self, body):
    if b'"agent/followup"' in body:
        state["followups"] += 1
        if state["followups"] == 2:
            start()
    return receive(self, body)
rpc.AgentProtocol.receive = traced_receive

notify = rpc.AgentProtocol.notify
def traced_notify(self, method, params=None):
    if state["on"] and method == "session/event" and "notify" not in watched:
        watched.add("notify")
        note_stack(sys._getframe(1))
    notify(self, method, params)
    if state["on"] and method == "agent/status" and params.get("status") == "idle":
        stop()
rpc.AgentProtocol.notify = traced_notify

from agent_lsp.cli.main import main
sys.exit(main(["serve"]))
"""


class TracedClient(Client):
    command = (sys.executable, "-c", TRACER)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deltas", type=int, default=3)
    args = parser.parse_args()
    ports: multiprocessing.Queue[int] = multiprocessing.Queue()
    model = multiprocessing.Process(target=_model_server, args=(ports,), daemon=True)
    model.start()
    url = f"http://127.0.0.1:{ports.get(timeout=30)}"
    with tempfile.TemporaryDirectory() as tmp_dir:
        out = Path(tmp_dir) / "trace.txt"
        os.environ["TRACE_OUT"] = str(out)
        client = TracedClient()
        await client.start(url, Path(tmp_dir))
        await client.set_deltas(args.deltas)
        sid = await client.new_session()
        await client.turn(sid, args.deltas)  # the first followup: everything loads
        await client.turn(sid, args.deltas)  # traced
        for _ in range(100):
            if out.exists():
                break
            await asyncio.sleep(0.05)
        trace = json.loads(out.read_text())
        await client.stop()
    model.terminate()
    print(f"a warm agent/followup ({args.deltas} deltas over HTTP, load average {os.getloadavg()[0]:.1f}):")
    print(f"- the call path from the request to the model request and from a chunk to the notification "
          f"crosses {len(trace['path'])} files (target <= {TARGET_FILES}):")
    for name in trace["path"]:
        print(f"    {name}")
    print(f"- every file with a function that ran meanwhile: {len(trace['executed'])}:")
    print("    " + ", ".join(trace["executed"]))


if __name__ == "__main__":
    asyncio.run(main())
