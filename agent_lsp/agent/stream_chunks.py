"""The chunks of a model's streamed answer (text, reasoning, tool-call
arguments, usage, finish), as the durable `assistant/chunk` event records them."""

from __future__ import annotations

from typing import Literal, Union

from pydantic import Field

from agent_lsp.agent.event_shapes import EventModel, LlmFailure, Usage


# ------------------------------------------------------------------ stream chunks


class TextStart(EventModel):
    type: Literal["text-start"]


class TextDelta(EventModel):
    type: Literal["text-delta"]
    text: str


class TextEnd(EventModel):
    type: Literal["text-end"]


class ReasoningStart(EventModel):
    type: Literal["reasoning-start"]


class ReasoningDelta(EventModel):
    type: Literal["reasoning-delta"]
    text: str


class ReasoningEnd(EventModel):
    type: Literal["reasoning-end"]
    signature: str | None = None
    redacted_data: str | None = None


class ToolCallStart(EventModel):
    type: Literal["tool-call-start"]
    id: str
    name: str


class ToolCallDelta(EventModel):
    type: Literal["tool-call-delta"]
    id: str
    delta: str = Field(description="a fragment of the call's JSON arguments")


class ToolCallEnd(EventModel):
    type: Literal["tool-call-end"]
    id: str


class UsageChunk(EventModel):
    type: Literal["usage"]
    usage: Usage = Field(description="cumulative: the last one wins")


class Finish(EventModel):
    type: Literal["finish"]
    kind: Literal["stop", "tool-calls", "max-tokens", "error", "aborted"]
    failure: LlmFailure | None = None


Chunk = Union[
    TextStart, TextDelta, TextEnd, ReasoningStart, ReasoningDelta, ReasoningEnd,
    ToolCallStart, ToolCallDelta, ToolCallEnd, UsageChunk, Finish,
]
