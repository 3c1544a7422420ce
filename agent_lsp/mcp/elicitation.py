"""Questions an MCP server asks the user (`elicitation/create`, form mode).

The connection hands each question to the manager, which asks the editor
(the `Elicitor` below: the LSP layer sends `agent/elicit`, or falls back to
`window/showMessageRequest`) and answers `cancel` when no answer comes in
time. An editor that cannot ask at all gets `decline`. URL-mode questions
(open a page out of band) are declined: nothing here opens them yet.

`single_choice` turns a question whose answer is one pick (no fields, one
boolean, one enum) into buttons, for editors that can only show a message
with buttons; any other form cannot be asked that way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Question:
    server: str
    message: str
    schema: dict[str, Any]  # the requested schema: a flat object of primitive properties
    session_id: str | None = None  # the session whose tool call asked, when exactly one is calling


@dataclass(frozen=True)
class Answer:
    action: Action
    content: dict[str, Any] | None = None
    reason: str | None = field(default=None, compare=False)  # why it was not asked (for the log)


class Elicitor(Protocol):
    async def elicit(self, question: Question) -> Answer: ...


def single_choice(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """(button title, content when picked) for a question answered by one pick, else None."""
    properties = schema.get("properties") or {}
    if not properties:
        return [("Accept", {})]
    if len(properties) != 1:
        return None
    (name, prop), = properties.items()
    if prop.get("type") == "boolean":
        return [("Yes", {name: True}), ("No", {name: False})]
    values = prop.get("enum") or [option.get("const") for option in prop.get("oneOf") or ()]
    if values and all(isinstance(v, str) for v in values):
        titles = prop.get("enumNames") or [option.get("title") or option.get("const") for option in prop.get("oneOf") or ()]
        titles = titles if len(titles) == len(values) else values
        return [(str(title), {name: value}) for title, value in zip(titles, values)]
    return None
