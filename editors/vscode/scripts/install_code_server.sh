#!/usr/bin/env bash
# Installs code-server (VS Code 1.100.3 in the browser; the last release for
# Node 20) from the npm registry into DEST, with nothing fetched from
# anywhere else:
# - install scripts are off while npm installs, so nothing downloads prebuilt
#   binaries (ripgrep from GitHub: Debian's rg is linked in instead);
# - the native modules are then compiled from source (argon2's node-pre-gyp
#   would otherwise fetch a prebuilt binary from GitHub), against the local
#   Node headers in $npm_config_nodedir (node-gyp would otherwise download
#   them).
# Needs: build-essential libkrb5-dev ripgrep and the Node headers. About 2
# minutes cold.
set -euo pipefail
export npm_config_yes=true npm_config_build_from_source=true
: "${npm_config_nodedir:?set npm_config_nodedir to the Node installation whose include/node has the headers}"
export npm_config_nodedir
VER=${CODE_SERVER_VERSION:-4.100.3}
DEST=$1
if [ -x "$DEST/out/node/entry.js" ] || [ -f "$DEST/out/node/entry.js" ]; then
  echo "code-server already in $DEST"; exit 0
fi
rm -rf "$DEST.partial"; mkdir -p "$DEST.partial"; cd "$DEST.partial"
npm pack "code-server@$VER" >/dev/null
tar xzf "code-server-$VER.tgz" --strip-components=1 && rm "code-server-$VER.tgz"
npm install --omit=dev --unsafe-perm --ignore-scripts --no-audit --no-fund
npm rebuild --unsafe-perm --foreground-scripts argon2  # the log shows it compiles, downloads nothing
cd lib/vscode
npm install --omit=dev --unsafe-perm --ignore-scripts --no-audit --no-fund
mkdir -p node_modules/@vscode/ripgrep/bin && ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
npm rebuild --unsafe-perm
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --unsafe-perm --no-audit --no-fund)
cd "$DEST.partial/.."
rm -rf "$DEST"; mv "$DEST.partial" "$DEST"
echo "installed code-server $VER in $DEST"
