"""A mutable, ordered collection of tools. The scheduler reads it before
starting each call (reclassification, R6.4), so changes made by a
running tool apply to later calls of the same step."""

from __future__ import annotations

from typing import Iterable, Iterator

from agent_lsp.agent.ports import Tool
from agent_lsp.agent.tool_schema import lean_schema
from agent_lsp.llm.types import ToolSpec


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()):
        self._tools: dict[str, Tool] = {}
        self._specs: dict[int, tuple[Tool, ToolSpec]] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        """Add a tool, or replace the one with the same name (keeping its position)."""
        self._tools[tool.name] = tool

    def remove(self, name: str) -> bool:
        return self._tools.pop(name, None) is not None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def list(self) -> list[Tool]:
        return list(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def specs(self) -> list[ToolSpec]:
        """What the model sees: name, description, the input model's JSON Schema (lean: agent/tool_schema.py)."""
        out: list[ToolSpec] = []
        for tool in self._tools.values():
            cached = self._specs.get(id(tool))
            if cached is None or cached[0] is not tool:
                spec: ToolSpec = {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": lean_schema(tool.input_model.model_json_schema()),
                }
                cached = (tool, spec)
                self._specs[id(tool)] = cached
            out.append(cached[1])
        return out
