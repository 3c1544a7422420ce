"""A tool's JSON Schema as the model reads it: what constrains the arguments
and nothing that repeats it.

Every request carries every offered tool's schema, so its size is paid on
each step (and counts against small context windows). pydantic's schemas
say several things twice; `lean_schema` keeps their meaning and drops:

- `title`s (a property's title is its name, capitalised);
- `$defs` and `$ref`: each definition is written where it is used (a
  definition that refers to itself stays as it is);
- `anyOf [X, {type: null}]` with `default: null`: an optional argument is one
  the model may leave out, so it reads as X;
- `additionalProperties: false`: the arguments are checked on arrival anyway,
  and an unknown one is refused with a readable error.

The input is not changed (a tool may share its schema); a new dict is made.
"""

from __future__ import annotations

from typing import Any

_REF_PREFIX = "#/$defs/"


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs") or {}
    lean = _lean(schema, defs, ())
    if isinstance(lean, dict) and "$defs" in lean:
        kept = {name: d for name, d in lean["$defs"].items() if _referenced(lean, name)}
        if kept:
            lean["$defs"] = kept
        else:
            del lean["$defs"]
    return lean


def _lean(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_lean(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        name = ref[len(_REF_PREFIX):]
        if name in defs and name not in seen:
            inlined = _lean(defs[name], defs, (*seen, name))
            rest = {k: _lean(v, defs, seen) for k, v in node.items() if k not in ("$ref", "title")}
            return {**inlined, **rest} if isinstance(inlined, dict) else inlined
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "additionalProperties" and value is False:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _lean(sub, defs, seen) for name, sub in value.items()}  # names kept, "title" too
            continue
        if key == "$defs" and isinstance(value, dict):
            out[key] = {name: _lean(sub, defs, (*seen, name)) for name, sub in value.items()}
            continue
        out[key] = _lean(value, defs, seen)
    return _optional(out)


def _optional(node: dict[str, Any]) -> dict[str, Any]:
    """`anyOf [X, null]` with default null reads as X."""
    options = node.get("anyOf")
    if not (isinstance(options, list) and len(options) == 2 and "default" in node and node["default"] is None):
        return node
    kept = [o for o in options if o != {"type": "null"}]
    if len(kept) != 1 or not isinstance(kept[0], dict):
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    return {**kept[0], **rest}


def _referenced(node: Any, name: str) -> bool:
    if isinstance(node, dict):
        if node.get("$ref") == _REF_PREFIX + name:
            return True
        return any(_referenced(v, name) for k, v in node.items() if k != "$defs")
    if isinstance(node, list):
        return any(_referenced(v, name) for v in node)
    return False
