#!/usr/bin/env bash
# Installs the pinned DeepSeek Harness (scripts/dsh.txt: its version and the
# Node it needs; scripts/dsh/: the package and lock files naming dsh with the
# plugin packages it needs as peers) into $AKK_DSH_DIR, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/akk/dsh (scripts/node-app.sh). Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/node-app.sh"
dir=$(node_app_dir dsh AKK_DSH_DIR)
read -r dsh_version node_version < <(grep -v '^#' "$here/dsh.txt" | head -1)
lock=$(sha256sum "$here/dsh/package-lock.json" | cut -c1-12)
stamp="dsh@$dsh_version node@$node_version lock@$lock"
if node_app_fresh "$dir" "$stamp"; then
  echo "dsh: already installed in $dir ($stamp)"
  exit 0
fi
bin=$(node_app_node "$dir" "$node_version")
cp "$here/dsh/package.json" "$here/dsh/package-lock.json" "$dir/app/"
# dsh names its plugin packages as peers, some of which conflict: they are
# named in package.json and peers are left alone. npm install, not npm ci:
# the lock keeps every version, and npm ci refuses a lock that lacks other
# platforms' optional packages.
(cd "$dir/app" && PATH="$bin:$PATH" npm install --legacy-peer-deps --no-audit --no-fund --loglevel=error >/dev/null)
got=$(PATH="$bin:$PATH" "$dir/app/node_modules/.bin/dsh" --version)
[ "$got" = "$dsh_version" ] || { echo "dsh: installed $got, want $dsh_version" >&2; exit 1; }
echo "$stamp" > "$dir/.installed"
echo "dsh: installed in $dir ($stamp)"
