#!/usr/bin/env bash
# Installs the pinned OpenClaw (scripts/openclaw.txt: its version and the
# Node it needs) into $AKK_OPENCLAW_DIR, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/akk/openclaw (scripts/node-app.sh).
# Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/node-app.sh"
dir=$(node_app_dir openclaw AKK_OPENCLAW_DIR)
read -r openclaw_version node_version < <(grep -v '^#' "$here/openclaw.txt" | head -1)
stamp="openclaw@$openclaw_version node@$node_version"
if node_app_fresh "$dir" "$stamp"; then
  echo "openclaw: already installed in $dir ($stamp)"
  exit 0
fi
bin=$(node_app_node "$dir" "$node_version")
(cd "$dir/app" && PATH="$bin:$PATH" npm install --no-audit --no-fund --loglevel=error "openclaw@$openclaw_version" >/dev/null)
PATH="$bin:$PATH" "$dir/app/node_modules/.bin/openclaw" --version >/dev/null
echo "$stamp" > "$dir/.installed"
echo "openclaw: installed in $dir ($stamp)"
