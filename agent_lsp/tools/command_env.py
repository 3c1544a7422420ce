"""The environment a command runs with (the `shell` settings).

By default a command inherits the server's environment without its secrets:
every variable named like one (`*_API_KEY`, `*_KEY`, `*_TOKEN`, `*_SECRET`,
`*_PASSWORD`, …), every `AGENT_LSP_*` variable, and every variable whose
value is a secret the settings configured (`agent_lsp.secrets`). So `env`
run by the agent shows no key, and neither the session log nor the model
gets one.

    [shell]
    inherit = "all"          # "all": as above; "core": only PATH, HOME, LANG, ...; "none": nothing
    passEnv = ["GITHUB_TOKEN", "AWS_*"]   # names (or globs) passed through even so
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from typing import Literal, Mapping

from agent_lsp import secrets

Inherit = Literal["all", "core", "none"]

# What a command needs to behave like one started from a terminal (codex calls this set "core").
CORE_VARS = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TEMP", "TMP", "TZ",
             "SYSTEMROOT", "COMSPEC", "PATHEXT", "USERPROFILE", "APPDATA", "LOCALAPPDATA")
CORE_PREFIXES = ("LC_",)

# Set for every command: no pager waits for a keypress, git never prompts.
FIXED = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class CommandEnvPolicy:
    inherit: Inherit = "all"
    pass_env: tuple[str, ...] = ()
    # the environment commands start from: the editor's (on the agent host, each window's own);
    # None: this process's
    base: Mapping[str, str] | None = field(default=None, compare=False)

    def passes(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.pass_env)


def is_secret_var(name: str, value: str) -> bool:
    return (
        name.startswith("AGENT_LSP_")
        or bool(secrets.SECRET_ENV_NAME.search(name))
        or name in secrets.secret_env_names()
        or secrets.is_secret(value)
    )


def command_env(policy: CommandEnvPolicy, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of one command under `policy`, from `base` (else the
    policy's, else the server's own)."""
    base = base if base is not None else (policy.base if policy.base is not None else os.environ)
    env: dict[str, str] = {}
    for name, value in base.items():
        if policy.passes(name):
            env[name] = value
        elif policy.inherit == "all" and not is_secret_var(name, value):
            env[name] = value
        elif policy.inherit == "core" and (name in CORE_VARS or name.startswith(CORE_PREFIXES)):
            env[name] = value
    env.update(FIXED)
    return env
