#!/usr/bin/env bash
# Screenshots of the panel for the docs (dev-only, not part of CI): the
# first-run UI run (scripts/ui_firstrun.mjs) in a light and a dark theme, its
# view of a highlighted code block copied to docs/images/. Needs what
# `ci.sh editor` needs, and agent-lsp.vsix (`npm run package`).
set -euo pipefail
cd "$(dirname "$0")/.."
for theme in "Default Light Modern:light" "Default Dark Modern:dark"; do
  name=${theme%%:*}
  tag=${theme##*:}
  out="$PWD/.work/screenshots-$tag"
  VSCODE_THEME="$name" ARTIFACTS="$out" node scripts/vscode_run.mjs firstrun
  cp "$out/vscode-ui-firstrun-code.png" "../../docs/images/vscode-panel-$tag.png"
done
ls -l ../../docs/images/vscode-panel-*.png
