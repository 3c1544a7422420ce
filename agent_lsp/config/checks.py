"""What is wrong with a settings layer, in the user's words: `Problem` (one
readable line, a warning or an error), the keys no settings model knows (with
the nearest valid one), and a value pydantic refused."""

from __future__ import annotations

import difflib
from typing import Any, Literal, Mapping, get_args, get_origin

from pydantic import BaseModel

from agent_lsp.config import Settings


class Problem(str):
    """One readable line about a setting. A "warning" (an unknown key, ignored)
    leaves everything else working; an "error" means a setting the user asked
    for is not in effect (a one-shot command such as `run` stops on it)."""

    severity: Literal["warning", "error"] = "error"

    @classmethod
    def warning(cls, text: str) -> Problem:
        problem = cls(text)
        problem.severity = "warning"
        return problem


def _field_names(model: type[BaseModel]) -> dict[str, Any]:
    """Every name a key of `model` may be spelled with (wire alias and Python
    name) -> the field's annotation."""
    names: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        for spelling in (field.alias, name):
            if spelling:
                names[spelling] = field.annotation
    return names


def _nested_models(annotation: Any) -> tuple[type[BaseModel] | None, str]:
    """The settings model inside a field's type, and how it is held there:
    "one" (X or X | None), "list" (list[X]) or "dict" (dict[str, X])."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, "one"
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (list, tuple) and args:
        inner, how = _nested_models(args[0])
        return (inner, "list") if how == "one" else (None, "")
    if origin is dict and len(args) == 2:
        inner, how = _nested_models(args[1])
        return (inner, "dict") if how == "one" else (None, "")
    for arg in args:  # a union: X | None
        inner, how = _nested_models(arg)
        if inner is not None:
            return inner, how
    return None, ""


def drop_unknown_keys(data: dict[str, Any], model: type[BaseModel] | None = None,
                      path: tuple[str, ...] = ()) -> list[str]:
    """Remove the keys no settings model knows from `data` (in place), each with
    a line naming the nearest valid key. Valid keys come from the pydantic
    models, so a new setting needs nothing here."""
    model = model or Settings
    names = _field_names(model)
    wire_names = [field.alias or name for name, field in model.model_fields.items()]
    messages: list[str] = []
    for key in list(data):
        dotted = ".".join((*path, str(key)))
        if key not in names:
            lowered = {name.lower(): name for name in wire_names}
            close = difflib.get_close_matches(str(key).lower(), list(lowered), n=1, cutoff=0.6)
            hint = f' (did you mean "{".".join((*path, lowered[close[0]]))}"?)' if close else ""
            messages.append(f'unknown setting "{dotted}"{hint}; ignored')
            del data[key]
            continue
        inner, how = _nested_models(names[key])
        value = data[key]
        if inner is None:
            continue
        if how == "one" and isinstance(value, dict):
            messages += drop_unknown_keys(value, inner, (*path, str(key)))
        elif how == "list" and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    messages += drop_unknown_keys(item, inner, (*path, str(key), str(index)))
        elif how == "dict" and isinstance(value, dict):
            for name, item in value.items():
                if isinstance(item, dict):
                    messages += drop_unknown_keys(item, inner, (*path, str(key), str(name)))
    return messages


_SECRET_HINTS = ("key", "token", "secret", "password", "header", "env")


def describe_invalid(item: Mapping[str, Any]) -> str:
    """A pydantic error about one setting, in our words: `setting model.provider
    = "olama": must be one of 'auto', 'openai', 'anthropic' or 'scripted'`."""
    loc = ".".join(map(str, item["loc"]))
    message = str(item.get("msg", "invalid"))
    kind = item.get("type")
    if kind == "extra_forbidden":
        return f'unknown setting "{loc}"'
    if kind == "literal_error" and item.get("ctx", {}).get("expected"):
        message = f"must be one of {item['ctx']['expected']}"
    elif message.startswith("Input should be "):
        message = "must be " + message.removeprefix("Input should be ")
    elif message.startswith("Value error, "):
        message = message.removeprefix("Value error, ")
    elif kind == "missing":
        message = "is required"
    value = item.get("input")
    shown = ""
    if isinstance(value, (str, int, float, bool)) and not any(h in loc.lower() for h in _SECRET_HINTS):
        text = repr(value)
        shown = f" = {text if len(text) <= 60 else text[:57] + '...'}"
    return f"setting {loc}{shown}: {message}"
