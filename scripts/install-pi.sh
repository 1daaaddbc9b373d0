#!/usr/bin/env bash
# Installs the pinned Pi coding agent (scripts/pi.txt: its version and the
# Node it needs) into $AKK_PI_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/akk/pi
# (scripts/node-app.sh). Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/node-app.sh"
dir=$(node_app_dir pi AKK_PI_DIR)
read -r pi_version node_version < <(grep -v '^#' "$here/pi.txt" | head -1)
stamp="pi@$pi_version node@$node_version"
if node_app_fresh "$dir" "$stamp"; then
  echo "pi: already installed in $dir ($stamp)"
  exit 0
fi
bin=$(node_app_node "$dir" "$node_version")
(cd "$dir/app" && PATH="$bin:$PATH" npm install --no-audit --no-fund --loglevel=error "@earendil-works/pi-coding-agent@$pi_version" >/dev/null)
PATH="$bin:$PATH" "$dir/app/node_modules/.bin/pi" --version >/dev/null
echo "$stamp" > "$dir/.installed"
echo "pi: installed in $dir ($stamp)"
