"""Keys at a path in a settings layer (a JSON-like dict): set, drop, put back
the previous value, and layers merged deep."""

from __future__ import annotations

import copy
from typing import Any, Mapping


def deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def set_path(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value


def drop_path(target: Any, path: tuple[Any, ...]) -> bool:
    """Remove the key at `path` (as far as it exists in this layer); True if removed."""
    for depth in range(len(path), 0, -1):
        node = target
        for key in path[: depth - 1]:
            if isinstance(node, dict) and key in node:
                node = node[key]
            else:
                node = None
                break
        if isinstance(node, dict) and path[depth - 1] in node:
            del node[path[depth - 1]]
            return True
    return False


def restore_path(target: dict[str, Any], previous: dict[str, Any], path: tuple[Any, ...]) -> None:
    """Put back this layer's previous value at `path`, if it had one."""
    node: Any = previous
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return
        node = node[key]
    set_path(target, tuple(path), copy.deepcopy(node))
