"""Import the `acp` library without paying for what the face never uses.

`acp.schema` defines some 280 pydantic models. Building them costs about a
second of CPU at start, half of it pydantic reading the module's source to
turn attribute docstrings into field descriptions (`use_attribute_docstrings`:
only JSON Schema output shows them) and much of the rest building validators
for every model, most of which one session never sends or receives. While
`acp` is imported, the models of `acp.schema` are therefore made without
docstring extraction and with `defer_build` (a model's validator is built the
first time it is used). The wire is unchanged: the same models validate and
serialise the same way.

This reaches into one pydantic internal (`ConfigWrapper.for_model`); if it is
not there, `acp` is imported as it is, only slower.
"""

from __future__ import annotations

import sys
from typing import Any

SCHEMA_MODULE = "acp.schema"


def import_acp() -> None:
    if SCHEMA_MODULE in sys.modules:
        return
    try:
        from pydantic._internal._config import ConfigWrapper
        original = ConfigWrapper.__dict__["for_model"]
        build = original.__func__
    except (ImportError, KeyError, AttributeError):
        import acp  # noqa: F401
        return

    def for_model(cls: Any, bases: Any, namespace: dict[str, Any], kwargs: Any) -> Any:
        wrapper = build(cls, bases, namespace, kwargs)
        if namespace.get("__module__") == SCHEMA_MODULE:
            wrapper.config_dict["use_attribute_docstrings"] = False
            wrapper.config_dict["defer_build"] = True
        return wrapper

    ConfigWrapper.for_model = classmethod(for_model)  # type: ignore[method-assign]
    try:
        import acp  # noqa: F401
    finally:
        ConfigWrapper.for_model = original  # type: ignore[method-assign]
