"""The size of a folder's fixed prompt, for `agent-lsp config show`: the system
prompt and the tool schemas every request carries, in tokens estimated as
characters / 4 (agent/context_budget.py, the figure the `request/context`
event reports), per tool, for the full set and for the small set that
windows under 8k get (agent/tool_set.py).

Measured as a server builds them, on a host of its own whose sessions go to
a temporary folder: nothing of the folder's sessions is touched and nothing
is started. MCP servers' tools are not counted (their servers do not run
here); the language tool is, when `language.enabled` is on (it is offered
when a language server or the editor answers).
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from agent_lsp.agent.context_budget import raw_envelope_tokens
from agent_lsp.agent.tool_set import SMALL_WINDOW, offered
from agent_lsp.config import Settings


@dataclass
class FixedPrompt:
    system_tokens: int
    tool_tokens: dict[str, int] = field(default_factory=dict)
    full_tokens: int = 0
    small_tokens: int = 0
    small_set: list[str] = field(default_factory=list)
    tool_set: str = "auto"

    def lines(self) -> list[str]:
        full = f"about {self.full_tokens} tokens with all {len(self.tool_tokens)} tools"
        small = f"about {self.small_tokens} tokens with {', '.join(self.small_set)}"
        when = {"auto": f"windows under {SMALL_WINDOW // 1024}k get the small set",
                "small": "the small set is always offered", "full": "the full set is always offered"}[self.tool_set]
        return [f"fixed prompt (system prompt and tool schemas, characters / 4): {full}; {small}",
                f"  {when} (toolSet = {self.tool_set}); MCP tools not counted",
                f"  system prompt {self.system_tokens}; " + ", ".join(f"{n} {t}" for n, t in self.tool_tokens.items())]


def fixed_prompt_size(root: Path, settings: Settings, env: Mapping[str, str]) -> FixedPrompt:
    return asyncio.run(_measure(Path(root), settings, env))


async def _measure(root: Path, settings: Settings, env: Mapping[str, str]) -> FixedPrompt:
    from agent_lsp.workspace.disk_editor import DiskEditor
    from agent_lsp.workspace.host import WorkspaceHost

    with tempfile.TemporaryDirectory(prefix="agent-lsp-measure-") as sessions:
        host = WorkspaceHost(root, settings=settings.model_copy(update={"sessions_dir": sessions}),
                             editor=DiskEditor([root]), env=env)
        if settings.language.enabled:
            host.editor_language = lambda _settings: object()  # as when the editor's servers answer
        try:
            system = host.system_prompt.whole()  # the system prompt and the folder's part
            specs = host.tool_registry().specs()
        finally:
            await host.close()
    small = offered(specs, "small")
    return FixedPrompt(
        system_tokens=raw_envelope_tokens(system, ()),
        tool_tokens={s["name"]: raw_envelope_tokens("", [s]) - raw_envelope_tokens("", ()) for s in specs},
        full_tokens=raw_envelope_tokens(system, specs),
        small_tokens=raw_envelope_tokens(system, small),
        small_set=[s["name"] for s in small],
        tool_set=settings.tool_set,
    )
