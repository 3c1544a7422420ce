#!/usr/bin/env bash
# CI for the VS Code extension, in two parts (no argument: both):
#
#   ci.sh unit    npm ci (skipped when node_modules already matches
#                 package-lock.json), type check, unit tests, .vsix
#   ci.sh editor  the real-VS-Code tests: the extension-host suite (extension
#                 loaded from source) and the Playwright UI smoke (the .vsix
#                 just packaged, installed into code-server) in code-server
#                 4.100.3 with Debian's Chromium, against the real server
#                 (<repo>/.venv/bin/python -m agent_lsp).
#
# Nothing here needs root or installs system packages: when a Debian package
# the editor part needs is missing it prints "skip: <why>" and exits 77
# (.ci/run installs them: chromium ripgrep libkrb5-dev build-essential).
# Everything else comes from the npm registry.
#
# Times on the 2-core box: npm ci ~15 s, checks+build+unit tests+package ~10 s;
# code-server install ~75-130 s cold (skipped when .work/code-server exists or
# CODE_SERVER points at one); extension-host suite ~20 s; UI smoke ~30 s and its button clicks
# (ui_clicks.mjs) ~10 s; daily use ~30 s.
# Artefacts (screenshots, code-server logs): $ARTIFACTS (default editors/vscode/.work/artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
what=${1:-all}

unit() {
  # node_modules/.agent-lsp-lock records the package-lock.json it was installed from.
  local lock
  lock=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ -d node_modules ] && [ "$(cat node_modules/.agent-lsp-lock 2>/dev/null)" = "$lock" ]; then
    step "node_modules matches package-lock.json: npm ci skipped"
  else
    step "npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    echo "$lock" > node_modules/.agent-lsp-lock
  fi
  step "type check"
  npx tsc -p . --noEmit
  step "unit tests"
  npm test
  step "package"
  npm run package
  ls -l agent-lsp.vsix
}

# The Node headers node-gyp builds code-server's native modules against;
# without them it would download them from outside the package registries.
node_headers() {
  local prefix
  prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  [ -f "$prefix/include/node/common.gypi" ] && echo "$prefix"
}

editor() {
  local missing=()
  command -v chromium >/dev/null || missing+=(chromium)
  command -v rg >/dev/null || missing+=(ripgrep)
  [ -e /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
  { command -v make >/dev/null && command -v g++ >/dev/null; } || missing+=(build-essential)
  node_headers >/dev/null || missing+=(libnode-dev)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "skip: needs the Debian packages ${missing[*]} (.ci/run installs them; or apt-get install --no-install-recommends ${missing[*]})"
    exit 77
  fi
  [ -f agent-lsp.vsix ] || { echo "no agent-lsp.vsix: run 'ci.sh unit' first" >&2; exit 1; }

  export CODE_SERVER="${CODE_SERVER:-$PWD/.work/code-server}"
  step "code-server 4.100.3 in $CODE_SERVER"
  mkdir -p .work
  npm_config_nodedir=$(node_headers) bash scripts/install_code_server.sh "$CODE_SERVER" > .work/install.log 2>&1 \
    || { tail -n 60 .work/install.log; echo "installing code-server failed: full log in $PWD/.work/install.log" >&2; exit 1; }

  step "extension-host tests (real VS Code, real server)"
  npm run compile-exttest
  node scripts/vscode_run.mjs exttest
  step "UI smoke (Chromium + playwright-core)"
  node scripts/vscode_run.mjs ui
  step "UI: first run, code blocks"
  node scripts/vscode_run.mjs firstrun
  step "UI: daily use (panel focus, permission card while typing, following the output)"
  node scripts/vscode_run.mjs daily
}

case "$what" in
  unit) unit ;;
  editor) editor ;;
  all) unit; editor ;;
  *) echo "usage: ci.sh [unit|editor]" >&2; exit 2 ;;
esac
step "done"
