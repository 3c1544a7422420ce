"""The tool-call scheduler (R6).

Calls run in model order through groups: an exclusive call is a barrier
that runs alone; parallel calls share a rolling pool of at most
`max_parallel_tool_calls` running bodies. Every not-yet-started call is
reclassified right before it starts, so registry changes made by earlier
calls (or by result observers) apply. Prepare (`tool/call` + the
`tools/pre-execute` waterfall) is serial in model order; bodies run
concurrently; results commit in model order through a cursor over the slots.

On abort: no new starts; started bodies are drained (a body that ignores
cancellation for `cancel_grace_s` is abandoned: its task is cancelled and no
longer awaited, its result recorded as abandoned); their results commit in
order; every unstarted call gets a synthetic `tool/call` + error
`tool/result` (TOOL_ABORTED_BEFORE_DISPATCH); then `Aborted` is raised.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from agent_lsp.agent.ports import Tool, ToolOutput
from agent_lsp.agent.signal import Aborted, CancelToken

if TYPE_CHECKING:
    from agent_lsp.agent.handle import AgentHandle

log = logging.getLogger(__name__)

PARALLEL = "parallel"
EXCLUSIVE = "exclusive"

ABORTED_BEFORE_DISPATCH_TEXT = "tool call aborted before dispatch"


def error_output(code: str, message: str, name: str = "ToolError") -> ToolOutput:
    return ToolOutput(content=message, is_error=True, error={"name": name, "code": code, "message": message})


@dataclass
class _Slot:
    index: int
    call_id: str
    name: str
    raw: str
    tool: Tool | None = None
    args: BaseModel | None = None
    invalid: ToolOutput | None = None  # parse/validation/unknown-tool failure
    call_seq: int | None = None
    started: bool = False
    task: asyncio.Task[Any] | None = None
    output: ToolOutput | None = None
    needs_post: bool = True
    concluded: bool = False
    abandoned: bool = False
    contexts: list[str] = field(default_factory=list)

    @property
    def settled(self) -> bool:
        return self.output is not None


class ToolCallContext:
    """What a running tool may use of the agent (ports.ToolContext)."""

    def __init__(self, agent: "AgentHandle", slot: _Slot, turn: int, step: int, signal: CancelToken):
        self._agent = agent
        self._slot = slot
        self.call_id = slot.call_id
        self.name = slot.name
        self.turn = turn
        self.step = step
        self.session_id = agent.session_id
        self.signal = signal

    def steer(self, content: str) -> None:
        self._agent.steer(content, source="tool")

    def inject(self, content: str) -> None:
        self._agent.inject(content, source="tool")

    def conclude_turn(self) -> None:
        self._slot.concluded = True

    def progress(self, data: dict[str, Any]) -> None:
        self._agent.emit("agent/tool/progress", {"callId": self.call_id, "data": data})


class ToolCallScheduler:
    def __init__(self, agent: "AgentHandle", token: CancelToken, turn: int, step: int, calls: list[dict[str, Any]]):
        self.agent = agent
        self.token = token
        self.turn = turn
        self.step = step
        self.slots = [self._parse(i, c) for i, c in enumerate(calls)]
        self.cap = agent.options.max_parallel_tool_calls
        self._next = 0  # first unstarted slot
        self._commit = 0  # first uncommitted slot
        self._concluded = False

    # ------------------------------------------------------------- parsing

    def _parse(self, index: int, block: dict[str, Any]) -> _Slot:
        raw = block.get("arguments") or ""
        slot = _Slot(index, str(block.get("id")), str(block.get("name")), raw)
        self._resolve(slot)
        return slot

    def _resolve(self, slot: _Slot) -> None:
        """Look the tool up in the registry now and validate the arguments."""
        tool = self.agent.tools.get(slot.name)
        slot.tool, slot.args, slot.invalid = tool, None, None
        if tool is None:
            slot.invalid = error_output("UNKNOWN_TOOL", f"unknown tool: {slot.name}", "UnknownToolError")
            return
        try:
            parsed = json.loads(slot.raw) if slot.raw.strip() else {}
        except ValueError as e:
            slot.invalid = error_output("INVALID_ARGUMENTS", f"invalid JSON arguments for {slot.name}: {e}", "InvalidArgumentsError")
            return
        try:
            slot.args = tool.input_model.model_validate(parsed)
        except ValidationError as e:
            slot.invalid = error_output(
                "INVALID_ARGUMENTS", f"invalid arguments for {slot.name}: {e}", "InvalidArgumentsError"
            )

    def _classify(self, slot: _Slot) -> str:
        """Parallel only when the tool's classifier returns exactly True (R6.2)."""
        self._resolve(slot)
        if slot.tool is None or slot.args is None:
            return EXCLUSIVE
        try:
            return PARALLEL if slot.tool.is_parallel(slot.args) is True else EXCLUSIVE
        except Exception:
            return EXCLUSIVE

    # ----------------------------------------------------------------- run

    async def run(self) -> bool:
        """Run every call; True when a committed result concludes the turn."""
        try:
            await self._loop()
        except Aborted:
            pass
        except BaseException:
            await self._quiesce()  # R6.11: started bodies settle before the failure surfaces
            raise
        if self.token.aborted:
            await self._drain_after_abort()
            raise Aborted(self.token.reason)
        return self._concluded

    async def _loop(self) -> None:
        n = len(self.slots)
        exclusive_open = False  # an exclusive call is started and not committed
        while True:
            await self._commit_ready()
            if self._commit >= n or self.token.aborted:
                return
            if exclusive_open and self._commit >= self._next:
                exclusive_open = False
            admitted = False
            while not exclusive_open and self._next < n and not self.token.aborted:
                slot = self.slots[self._next]
                mode = self._classify(slot)
                if mode == EXCLUSIVE:
                    if self._commit < self._next:
                        break  # a barrier waits for the pool to drain
                    exclusive_open = True
                elif self._running_count() >= self.cap:
                    break
                self._next += 1
                admitted = True
                await self._prepare(slot)
                if mode == EXCLUSIVE:
                    break
            if admitted:
                continue  # commit what prepare settled, then admit more
            running = [s.task for s in self.slots[self._commit : self._next] if s.task is not None and not s.settled]
            if not running:
                if self._commit < self._next:
                    continue
                raise RuntimeError("tool scheduler made no progress")
            await self._wait_any(running)

    def _running_count(self) -> int:
        return sum(1 for s in self.slots[self._commit : self._next] if s.task is not None and not s.settled)

    async def _wait_any(self, tasks: list[asyncio.Task[Any]]) -> None:
        waiter = asyncio.ensure_future(self.token.wait())
        try:
            await asyncio.wait([*tasks, waiter], return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()

    # ------------------------------------------------------------- prepare

    async def _prepare(self, slot: _Slot) -> None:
        agent = self.agent
        slot.started = True
        event = agent.session.append(
            "tool/call",
            {"turn": self.turn, "step": self.step, "callId": slot.call_id, "name": slot.name, "arguments": slot.raw},
        )
        slot.call_seq = event.seq
        if slot.invalid is not None:
            slot.output = slot.invalid
            return
        payload = {
            "callId": slot.call_id,
            "name": slot.name,
            "arguments": slot.args,
            "tool": slot.tool,
            "turn": self.turn,
            "step": self.step,
            "signal": self.token,
        }
        try:
            decision = await agent.run_hook(self.token, "tools/pre-execute", payload, lambda p: {"kind": "allow"})
        except Aborted:
            slot.output = error_output("TOOL_ABORTED_BEFORE_DISPATCH", ABORTED_BEFORE_DISPATCH_TEXT, "AbortError")
            slot.needs_post = False
            return
        except Exception as e:
            slot.output = error_output("PRE_EXECUTE_FAILED", str(e) or type(e).__name__, type(e).__name__)
            slot.needs_post = False  # a throwing guard is a final result
            return
        kind = (decision or {}).get("kind", "allow")
        if kind != "allow":
            reason = (decision or {}).get("reason")
            text = "blocked by policy" + (f": {reason}" if reason else "")
            slot.output = error_output("TOOL_DENIED", text, "ToolDeniedError")
            return
        slot.task = asyncio.ensure_future(self._execute(slot))

    async def _execute(self, slot: _Slot) -> None:
        agent = self.agent
        ctx = ToolCallContext(agent, slot, self.turn, self.step, self.token)
        assert slot.tool is not None and slot.args is not None
        tool, args = slot.tool, slot.args

        async def body(p: dict[str, Any]) -> ToolOutput:
            agent.session.flush()  # checkpoint before each top-level tool body (R11.2)
            if self.token.aborted:
                return error_output("TOOL_ABORTED_BEFORE_DISPATCH", ABORTED_BEFORE_DISPATCH_TEXT, "AbortError")
            return await tool.run(args, ctx)

        try:
            out = await agent.hooks.run_waterfall(
                "tools/execute", {"callId": slot.call_id, "name": slot.name, "arguments": args, "context": ctx}, body
            )
            if not isinstance(out, ToolOutput):
                out = ToolOutput(content=str(out))
        except asyncio.CancelledError:
            if slot.abandoned:
                raise
            out = error_output("ABORTED", "tool call was cancelled", "AbortError")
        except Exception as e:
            out = error_output("TOOL_ERROR", f"{type(e).__name__}: {e}", type(e).__name__)
        if slot.output is None:  # an abandoned slot already has its result
            slot.output = out

    # -------------------------------------------------------------- commit

    async def _commit_ready(self) -> None:
        while self._commit < self._next and self.slots[self._commit].settled:
            slot = self.slots[self._commit]
            self._commit += 1
            await self._finalise(slot)

    async def _finalise(self, slot: _Slot) -> None:
        agent = self.agent
        output = slot.output
        assert output is not None
        if slot.needs_post and not slot.abandoned:
            payload = {
                "callId": slot.call_id,
                "name": slot.name,
                "arguments": slot.args,
                "output": output,
                "turn": self.turn,
                "step": self.step,
                "signal": self.token,
            }
            try:
                decision = await agent.run_hook(self.token, "tools/post-execute", payload, lambda p: p["output"])
                output = self._apply_post(output, decision)
            except Exception as e:
                output = error_output("POST_EXECUTE_FAILED", str(e) or type(e).__name__, type(e).__name__)
        content = output.content
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        message = {"role": "tool", "callId": slot.call_id, "name": slot.name, "content": blocks, "isError": bool(output.is_error)}
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "callId": slot.call_id, "name": slot.name, "message": message}
        if output.error is not None:
            data["error"] = output.error
        if output.meta is not None:
            # meta is for clients only; make it JSON (a Path or datetime becomes a string)
            data["meta"] = json.loads(json.dumps(output.meta, default=str))
        if slot.abandoned:
            data["abandoned"] = True
        data["surfaceOp"] = "append"
        data["sourceEventSeqs"] = [slot.call_seq] if slot.call_seq is not None else []
        agent.session.append("tool/result", data)
        agent.emit("agent/tool/result", {"callId": slot.call_id, "name": slot.name, "output": output, "data": data})
        if (output.concludes_turn or slot.concluded) and not output.is_error:
            self._concluded = True
        for text in output.additional_contexts:
            agent.inject(text, source="tool")

    @staticmethod
    def _apply_post(output: ToolOutput, decision: Any) -> ToolOutput:
        if isinstance(decision, ToolOutput):
            return decision
        if isinstance(decision, dict):
            kind = decision.get("kind", "accept")
            if kind == "block":
                feedback = str(decision.get("feedback") or "blocked by policy")
                return error_output("TOOL_BLOCKED", feedback, "ToolBlockedError")
            if isinstance(decision.get("output"), ToolOutput):
                output = decision["output"]
            extra = decision.get("additionalContexts")
            if extra:
                output.additional_contexts = list(output.additional_contexts) + [str(x) for x in extra]
        return output

    # --------------------------------------------------------------- abort

    async def _drain_after_abort(self) -> None:
        started = [s for s in self.slots[: self._next] if s.task is not None and not s.settled]
        if started:
            grace = self.agent.options.cancel_grace_s
            _, pending = await asyncio.wait([s.task for s in started if s.task], timeout=grace)
            for s in started:
                if s.task in pending:
                    s.abandoned = True
                    s.output = error_output(
                        "TOOL_ABANDONED",
                        f"tool did not stop within {grace:g}s of the cancel; abandoned (its outcome is unknown)",
                        "ToolAbandonedError",
                    )
                    s.task.cancel()  # a last request; never awaited
        await self._commit_ready()
        for slot in self.slots[self._next :]:
            event = self.agent.session.append(
                "tool/call",
                {"turn": self.turn, "step": self.step, "callId": slot.call_id, "name": slot.name, "arguments": slot.raw},
            )
            slot.call_seq = event.seq
            slot.output = error_output("TOOL_ABORTED_BEFORE_DISPATCH", ABORTED_BEFORE_DISPATCH_TEXT, "AbortError")
            slot.needs_post = False
            slot.started = True
            self._next += 1
            await self._commit_ready()

    async def _quiesce(self) -> None:
        tasks = [s.task for s in self.slots if s.task is not None and not s.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=self.agent.options.cancel_grace_s)
