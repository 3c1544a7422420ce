"""What the turn loop and its plugins (tool scheduling, retry and fallback,
compaction) may use of the agent: its public face, as a Protocol, so they
depend on this module and not on agent.py (which builds them: no import cycle)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Protocol

from agent_lsp.agent.hooks import HookBus
from agent_lsp.agent.options import AgentOptions
from agent_lsp.agent.registry import ToolRegistry
from agent_lsp.agent.signal import CancelToken
from agent_lsp.llm.types import ModelProvider
from agent_lsp.store.session import Session


class AgentHandle(Protocol):
    session: Session
    session_id: str
    options: AgentOptions
    hooks: HookBus
    providers: dict[str, ModelProvider]
    tools: ToolRegistry
    idle_listeners: list[Callable[[], Any]]

    @property
    def last_header(self) -> dict[str, Any] | None:
        """The request header of the latest `request/header` (this agent's or the log's)."""

    def emit(self, type: str, data: dict[str, Any]) -> None:
        """Deliver a live event (agent/live_events.py) to the agent's subscribers."""

    async def run_hook(self, token: CancelToken, name: str, payload: dict[str, Any],
                       terminal: Callable[[Any], Any] | None) -> Any:
        """Run a hook point as the loop does (cancel grace, abandon)."""

    def steer(self, content: Any, *, source: str = ...) -> dict[str, Any]: ...

    def inject(self, content: Any, *, source: str = ...) -> dict[str, Any]: ...

    def context_window(self, provider_name: str, model: str) -> int | None: ...

    def model_info(self, provider_name: str, model: str) -> Any:
        """The provider's ModelInfo of `model` (None when unknown)."""

    @property
    def assembly(self) -> dict[str, Any] | None:
        """`{system, tools}` of the step being prepared (or the last one)."""

    def next_route(self) -> tuple[str, str]:
        """(provider, model) the next request goes to, before `agent/request` runs."""

    def run_maintenance(self, task: Callable[[CancelToken], Awaitable[Any]]) -> Any: ...
