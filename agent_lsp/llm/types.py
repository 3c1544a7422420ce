"""The model-facing vocabulary every provider and the agent loop share.

Everything here is plain JSON-able data (dicts and lists), because the agent
logs every chunk and message losslessly in the session file. No httpx here:
the agent loop imports this module, and it must not pull in transport code.

Messages (model history, derived from the session log):

    {"role": "user", "id": "msg_…", "source": "user", "content": [Block, …]}
    {"role": "assistant", "content": [Block, …], "provider": "…", "model": "…"}
    {"role": "tool", "callId": "…", "name": "…", "content": [Block, …], "isError": bool}

Blocks:

    {"type": "text", "text": "…"}
    {"type": "reasoning", "text": "…", "signature"?: "…", "redactedData"?: "…"}
    {"type": "tool-call", "id": "…", "name": "…", "arguments": "<raw JSON text>"}

Stream chunks (what `ModelProvider.stream` yields, one dict each):

    {"type": "text-start"} / {"type": "text-delta", "text": "…"} / {"type": "text-end"}
    {"type": "reasoning-start"} / {"type": "reasoning-delta", "text": "…"}
    {"type": "reasoning-end", "signature"?: "…", "redactedData"?: "…"}
    {"type": "tool-call-start", "id": "…", "name": "…"}
    {"type": "tool-call-delta", "id": "…", "delta": "<JSON text fragment>"}
    {"type": "tool-call-end", "id": "…"}
    {"type": "usage", "usage": Usage}          cumulative: the last one wins
    {"type": "finish", "kind": FinishKind, "failure"?: LlmFailure}

Text and reasoning blocks are strictly sequential (a provider closes one
before opening the next); tool calls are keyed by id. Every stream ends with
exactly one `finish` chunk; a provider that raises instead is normalised by
the loop into `finish {kind: "error"}`.

Usage: {"inputTokens", "outputTokens", "cacheReadTokens"?, "cacheWriteTokens"?,
"reasoningTokens"?}; inputTokens counts every prompt token, cached ones included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Literal, Protocol, TypedDict, runtime_checkable

FinishKind = Literal["stop", "tool-calls", "max-tokens", "error", "aborted"]

# The one failure taxonomy (R9 in docs/agent-loop.md). Consumers route on `code`,
# never on provider text.
RATE_LIMIT = "RATE_LIMIT"
OVERLOADED = "OVERLOADED"
SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
SERVER = "SERVER"
NETWORK = "NETWORK"
TIMEOUT = "TIMEOUT"
EMPTY_RESPONSE = "EMPTY_RESPONSE"
CONTEXT_WINDOW_EXCEEDED = "CONTEXT_WINDOW_EXCEEDED"
AUTH = "AUTH"
QUOTA = "QUOTA"
BAD_REQUEST = "BAD_REQUEST"
CONTENT_FILTER = "CONTENT_FILTER"
REFUSAL = "REFUSAL"
MODEL_UNAVAILABLE = "MODEL_UNAVAILABLE"
ABORTED = "ABORTED"
UNKNOWN = "UNKNOWN"

# Worth the same request again after a wait.
TRANSIENT_CODES = frozenset(
    {RATE_LIMIT, OVERLOADED, SERVICE_UNAVAILABLE, SERVER, NETWORK, TIMEOUT, EMPTY_RESPONSE}
)


class Usage(TypedDict, total=False):
    inputTokens: int
    outputTokens: int
    cacheReadTokens: int
    cacheWriteTokens: int
    reasoningTokens: int


class LlmFailure(TypedDict, total=False):
    code: str  # one of the codes above
    message: str  # the provider's own words, never an API key
    status: int  # HTTP status when there was one
    providerRetryAfterMs: int  # parsed Retry-After / retry-after-ms / reset headers
    requestId: str
    provider: str
    model: str
    retryable: bool  # False: the same request again cannot help (nothing listens at a local endpoint)
    phase: str  # "connect": no connection was made (refused, unknown host, connect timeout)
    url: str  # the endpoint asked (agent_lsp.llm.endpoint)
    setting: str  # the env var or settings key to change, e.g. OPENAI_BASE_URL, model.apiKey
    promptTokens: int  # CONTEXT_WINDOW_EXCEEDED: the size the server counted, when it says (llama.cpp)
    contextWindow: int  # CONTEXT_WINDOW_EXCEEDED: the window the server runs with, when it says


class LlmError(Exception):
    """A classified model failure. Providers raise it; the loop turns it into
    a terminal `finish {kind: "error", failure}` chunk."""

    def __init__(self, failure: LlmFailure):
        self.failure: LlmFailure = dict(failure)  # type: ignore[assignment]
        self.failure.setdefault("code", UNKNOWN)
        self.failure.setdefault("message", self.failure["code"])
        super().__init__(f"{self.failure['code']}: {self.failure['message']}")

    @property
    def code(self) -> str:
        return self.failure["code"]


class ToolSpec(TypedDict):
    """What the model sees of a tool."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the tool's input model


@runtime_checkable
class AbortSignal(Protocol):
    """Read-only view of the turn's cancellation (implemented by the agent)."""

    @property
    def aborted(self) -> bool: ...

    @property
    def reason(self) -> Any: ...  # the cancel cause, e.g. {"kind": "user"}


@dataclass(frozen=True)
class ModelRequest:
    """One model call. Frozen: the loop logs exactly what it sends."""

    provider: str
    model: str
    system: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None
    temperature: float | None = None
    stop: tuple[str, ...] = ()
    session_id: str | None = None
    signal: AbortSignal | None = field(default=None, compare=False)
    options: dict[str, Any] = field(default_factory=dict)  # provider-specific extras


@dataclass(frozen=True)
class ModelInfo:
    context_window: int | None = None
    max_output_tokens: int | None = None


class ModelProvider(Protocol):
    """A model backend. `stream` yields chunk dicts (see module doc) and ends
    with one `finish` chunk, or raises `LlmError`. Cancellation is by
    cancelling the consuming task: the provider must close its connection
    when the async generator is closed or cancelled."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[dict[str, Any]]: ...

    def model_info(self, model: str) -> ModelInfo: ...


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def message_text(message: dict[str, Any]) -> str:
    """The concatenated text blocks of a message."""
    return "".join(b.get("text", "") for b in message.get("content", ()) if b.get("type") == "text")
