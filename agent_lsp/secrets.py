"""Secrets: the values that must never leave the process in clear, and `mask`,
the one function that hides them.

Everything that leaves the process passes through `mask`: every log record
(`MaskingFormatter`, on every handler the CLI installs, pygls' loggers
included), every session event before it is kept, stored or sent
(`agent_lsp.store.session`: what the model sees too, command output included)
and every notification (`agent_lsp.lsp.relay`).

Two kinds of masking:

- known values, registered as configuration arrives (`register_env`,
  `register_settings`: the env vars, the config file, `initializationOptions`
  and `workspace/configuration`, via `agent_lsp.config`), and by the model
  providers for the key and headers they send;
- shapes, for a secret nobody registered, or one seen before it could be
  registered (pygls logs the `initialize` request before any handler runs):
  well-known key formats (`sk-…`, `gsk_…`, `ghp_…`, `AKIA…`, …), `Bearer …`,
  and the value of a field named like a secret (`apiKey`, `authorization`,
  `x-api-key`, `password`, `*_API_KEY=`, …) in JSON, TOML, Python reprs and
  `env` output.

This module imports nothing of agent_lsp: every layer may use it.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, Iterable, Mapping

MASK = "***"

# Shorter values are not registered: masking a short word everywhere would
# mangle ordinary text, and real keys are far longer.
MIN_SECRET_CHARS = 8

# Env var names whose values are secrets (and never reach a command's environment).
SECRET_ENV_NAME = re.compile(r"(?i)(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$")

# Setting keys whose string value is a secret; `headers` and `env` mappings hold secrets in every value.
_SECRET_SETTING_KEY = re.compile(r"(?i)^(?:api[-_]?key|.*token|.*secret|password|authorization|x-api-key)$")
_SECRET_MAPPINGS = ("headers", "env")
# Headers that carry no secret; their values stay readable.
_PUBLIC_HEADERS = frozenset(
    {"http-referer", "referer", "x-title", "user-agent", "accept", "content-type", "anthropic-version", "anthropic-beta"}
)

# A token of a key format has a digit somewhere: "sk-learn" and "Bearer authentication" are words.
_DIGIT = r"(?=[A-Za-z0-9_\-.~+/]*\d)"

# Where a token starts: not inside a word; but right after a JSON escape (`\n`), as
# `mask` runs on encoded event lines too.
_START = r"(?:(?<=\\[nrt])|(?<![A-Za-z0-9_]))"

# Well-known key formats; a short prefix is kept so a log still says which kind of key it was.
# The pattern is tried only where one of _KEY_LITERALS starts (`in` and str.find are ~100x
# faster than a regex scan, and `mask` runs on every event the session log appends).
_KEY_LITERALS = ("sk-", "sk_", "gsk_", "xai-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "hf_",
                 "rk_", "pplx-", "nvapi-", "AIza", "AKIA", "xox", "Bearer", "bearer", "BEARER")
_KEY_SHAPES = re.compile(
    "|".join(
        (
            rf"{_START}(sk-(?:ant-|proj-|or-)?)[A-Za-z0-9_\-]{{10,}}",
            rf"{_START}((?:gsk|xai|ghp|gho|ghu|ghs|ghr|github_pat|glpat|hf|sk_live|rk_live|pplx|nvapi)[_-]){_DIGIT}[A-Za-z0-9_\-]{{10,}}",
            rf"{_START}(AIza)[0-9A-Za-z_\-]{{30,}}",
            rf"{_START}(AKIA)[0-9A-Z]{{16}}\b",
            rf"{_START}(xox[abprs]-){_DIGIT}[A-Za-z0-9\-]{{10,}}",
            rf"{_START}((?i:bearer)\s+){_DIGIT}[A-Za-z0-9\-._~+/]{{8,}}=*",
        )
    )
)

# The value of a field named like a secret: NAME=value (env output), "name": "value" (JSON),
# 'name': 'value' (Python reprs), name = "value" (TOML), name: value (HTTP headers). Logs only:
# applied to file contents it would mangle code such as `api_key=api_key`.
_SECRET_FIELDS = re.compile(
    "|".join(
        (
            r"(\b[A-Z0-9_]*(?:API_?KEY|_TOKEN|_SECRET|PASSWORD)=)[^\s\"'\\]{4,}",
            r"([\"']?\b(?:[\w-]*(?:api[-_]?key|token|secret|password|passwd)|authorization)[\"']?\s*[:=]\s*[\"']?)"
            r"(?!\*\*\*)(?!bearer\s)[^\s\"'\\,;}\]]{4,}",
        )
    ),
    re.IGNORECASE,
)


# A `headers` object of a settings dump: every value in it (a header of any name may carry a token).
_HEADERS_OBJECT = re.compile(r"([\"']headers[\"']\s*:\s*\{)([^{}]*)(\})", re.IGNORECASE)
_QUOTED_VALUE = re.compile(r"(:\s*[\"'])(?!\*\*\*)[^\"']{4,}(?=[\"'])")


def _mask_header_values(match: re.Match[str]) -> str:
    return match.group(1) + _QUOTED_VALUE.sub(lambda m: m.group(1) + MASK, match.group(2)) + match.group(3)


def _keep_prefix(match: re.Match[str]) -> str:
    return next(v for v in match.groups() if v is not None) + MASK


class _Registry:
    def __init__(self) -> None:
        self._values: set[str] = set()
        self._env_names: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._snapshot: tuple[str, ...] = ()  # read without the lock by `mask`
        self._lock = threading.Lock()

    def add(self, value: str) -> None:
        forms = {value, json.dumps(value, ensure_ascii=False)[1:-1]}  # as is, and as inside a JSON string
        with self._lock:
            new = forms - self._values
            if not new:
                return
            self._values |= new
            # longest first: a secret containing another is masked whole
            alternatives = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(map(re.escape, alternatives)))
            self._snapshot = tuple(alternatives)

    def add_env_name(self, name: str) -> None:
        with self._lock:
            self._env_names.add(name)

    @property
    def pattern(self) -> re.Pattern[str] | None:
        return self._pattern

    @property
    def values(self) -> tuple[str, ...]:
        return self._snapshot

    def knows(self, value: str) -> bool:
        return value in self._values

    @property
    def env_names(self) -> frozenset[str]:
        return frozenset(self._env_names)


_registry = _Registry()


# ------------------------------------------------------------------ registering


def register(*values: Any) -> None:
    """Mask these values from now on (non-strings, and strings shorter than
    MIN_SECRET_CHARS after stripping, are ignored)."""
    for value in values:
        if isinstance(value, str):
            value = value.strip()
            if len(value) >= MIN_SECRET_CHARS:
                _registry.add(value)


def register_env(env: Mapping[str, str]) -> None:
    """The values of every env var named like a secret (`*_API_KEY`, `*_TOKEN`, …)."""
    for name, value in env.items():
        if SECRET_ENV_NAME.search(name):
            _registry.add_env_name(name)
            register(value)


def register_settings(settings: Any) -> None:
    """The secrets of one settings layer (wire shape): the value of any key
    named like a secret (`apiKey`, `*Token`, …) and every value of a `headers`
    or `env` mapping, at any depth (so MCP servers' headers are covered too)."""
    if isinstance(settings, Mapping):
        for key, value in settings.items():
            key = str(key)
            if key in _SECRET_MAPPINGS and isinstance(value, Mapping):
                for name, item in value.items():
                    if str(name).lower() not in _PUBLIC_HEADERS:
                        register(item)
            elif isinstance(value, str):
                if _SECRET_SETTING_KEY.match(key):
                    register(value)
            else:
                register_settings(value)
    elif isinstance(settings, (list, tuple)):
        for item in settings:
            register_settings(item)


def register_headers(headers: Mapping[str, str]) -> None:
    """HTTP headers a client sends: every value but the well-known public ones."""
    register_settings({"headers": dict(headers)})


def is_secret(value: str) -> bool:
    """True if `value` is a registered secret."""
    return _registry.knows(value.strip())


def secret_env_names() -> frozenset[str]:
    """Names of env vars seen by `register_env` whose values are secrets."""
    return _registry.env_names


# ---------------------------------------------------------------------- masking


def _may_hold_key(t: str) -> bool:
    """A quick superset of "one of _KEY_LITERALS is in t" ("gh" for the five gh*_ ones)."""
    return ("sk-" in t or "sk_" in t or "xai-" in t or "gh" in t or "glpat-" in t or "hf_" in t or "rk_" in t
            or "pplx-" in t or "nvapi-" in t or "AIza" in t or "AKIA" in t or "xox" in t or "earer" in t
            or "EARER" in t)


def _key_starts(text: str) -> list[int]:
    if not _may_hold_key(text):
        return []
    starts: list[int] = []
    for literal in _KEY_LITERALS:
        at = text.find(literal)
        while at >= 0:
            starts.append(at)
            at = text.find(literal, at + 1)
    return sorted(starts) if len(starts) > 1 else starts


def _mask_key_shapes(text: str) -> str:
    parts: list[str] = []
    done = 0
    for start in _key_starts(text):
        if start < done:
            continue
        key = _KEY_SHAPES.match(text, start)
        if key is not None:
            parts += (text[done : key.start()], _keep_prefix(key))
            done = key.end()
    return text if not parts else "".join(parts) + text[done:]


def mask(text: str) -> str:
    """`text` with every registered secret and every token of a well-known key
    format replaced by `***`. What is stored, sent and shown to the model.
    Returns `text` itself when there is nothing to mask."""
    original = text
    for value in _registry.values:
        if value in text:
            text = _registry.pattern.sub(MASK, text)  # type: ignore[union-attr]
            break
    text = _mask_key_shapes(text)
    return original if text == original else text


def mask_fields(text: str) -> str:
    """`mask`, and the value of every field named like a secret too: what is logged
    (a log may quote settings before they are registered) and provider errors."""
    text = _SECRET_FIELDS.sub(_keep_prefix, mask(text))
    return _HEADERS_OBJECT.sub(_mask_header_values, text) if "eaders" in text else text


def mask_value(value: Any) -> Any:
    """`value` (JSON-like) with `mask` applied to every string in it; the same object when nothing changed."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, item in value.items():
            masked = mask_value(item)
            changed = changed or masked is not item
            out[key] = masked
        return out if changed else value
    if isinstance(value, list):
        items = [mask_value(item) for item in value]
        return items if any(a is not b for a, b in zip(items, value)) else value
    return value


def mask_json_line(line: str) -> tuple[str, Any | None]:
    """A JSON text masked: (the masked text, its decoded value), or (line, None)
    when there was nothing to mask. Masking never breaks the JSON: when the
    masked text would not parse, the decoded original is masked value by value."""
    masked = mask(line)
    if masked is line:
        return line, None
    try:
        return masked, json.loads(masked)
    except ValueError:
        value = mask_value(json.loads(line))
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")), value


# ---------------------------------------------------------------------- logging


class MaskingFormatter:
    """Wraps a handler's formatter: the whole formatted record (message, args,
    traceback) is masked before it is written."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def format(self, record: Any) -> str:
        return mask_fields(self.inner.format(record))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def install_log_masking(handlers: Iterable[Any]) -> None:
    """Mask every record these logging handlers write (and the handler of last
    resort, which writes warnings when no handler is configured)."""
    import logging

    for handler in (*handlers, logging.lastResort):
        if handler is None:
            continue
        if not isinstance(handler.formatter, MaskingFormatter):
            handler.setFormatter(MaskingFormatter(handler.formatter or logging.Formatter()))  # type: ignore[arg-type]

