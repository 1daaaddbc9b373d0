#!/usr/bin/env bash
# Installs the Node tools the tests use (scripts/node-tools.json) into
# $AKK_NODE_TOOLS_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/akk/node-tools. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${AKK_NODE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/akk/node-tools}
mkdir -p "$dir"
if [ -f "$dir/.installed" ] && cmp -s "$here/node-tools.json" "$dir/package.json"; then
  echo "node tools: already installed in $dir"
  exit 0
fi
cp "$here/node-tools.json" "$dir/package.json"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
touch "$dir/.installed"
echo "node tools: installed in $dir"
