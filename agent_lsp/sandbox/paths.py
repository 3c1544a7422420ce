"""Which parts of the user's home a sandboxed command sees.

$HOME is hidden (a command sees an empty scratch home whose writes are
discarded when it ends) except the toolchains below, read-only. The secrets
below are never visible, whatever else is allowed: not through the toolchain
list, not through an extra readable or writable path, not when the workspace
is the home folder itself.
"""

from __future__ import annotations

from pathlib import Path

# Read-only in the sandbox: what compilers, interpreters and version managers
# installed per user need to run. (Never a file that may hold a token: no
# ~/.npmrc, no ~/.pypirc, no ~/.cargo/credentials.)
TOOLCHAIN_PATHS: tuple[str, ...] = (
    ".cargo/bin", ".cargo/env", ".cargo/registry", ".cargo/git", ".cargo/config.toml", ".rustup",
    ".local/bin", ".local/lib", ".local/share/uv/python", ".local/share/uv/tools", ".local/share/pipx",
    ".local/share/pnpm", ".local/share/mise", ".local/share/pypoetry", ".local/share/virtualenvs",
    ".pyenv", ".nvm", ".volta", ".bun", ".deno", ".asdf", ".sdkman", ".ghcup", ".elan", ".opam",
    ".juliaup", ".nix-profile", ".rbenv", ".gem", "go/bin", "go/pkg/mod", "sdk",
    ".gitconfig", ".config/git",
)

# Never visible in the sandbox.
SECRET_PATHS: tuple[str, ...] = (
    ".ssh", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".gnupg", ".password-store",
    ".local/share/keyrings", ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".config/gh", ".config/hub",
    ".cargo/credentials", ".cargo/credentials.toml", ".terraform.d", ".vault-token", ".config/agent-lsp",
    ".local/share/agent-lsp",
    # browser profiles
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge",
    ".config/vivaldi", ".config/opera", "snap/firefox", "snap/chromium",
    "Library/Keychains", "Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
    "Library/Application Support/BraveSoftware", "Library/Application Support/Microsoft Edge", "Library/Safari",
    "Library/Cookies",
)


def toolchain_paths(home: Path) -> list[Path]:
    return [home / p for p in TOOLCHAIN_PATHS]


def secret_paths(home: Path) -> list[Path]:
    return [home / p for p in SECRET_PATHS]


def is_under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
