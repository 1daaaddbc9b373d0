#!/usr/bin/env bash
# Installs every pinned agent version (scripts/agents.txt) and the unprofiled
# releases the tests use (scripts/agents-unprofiled.txt) into the agent cache, once.
# Cache: $AKK_AGENTS_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/akk/agents.
# Each version lands in <cache>/<kind>@<version>/ with a "bin" symlink to its native binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${AKK_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/akk/agents}
mkdir -p "$cache"

native_bin() { # kind dir -> path of the native binary
  case "$1" in
    claude) find "$2/node_modules/@anthropic-ai/claude-code" -maxdepth 2 -type f \( -name claude.exe -o -name claude \) -perm -u+x 2>/dev/null | head -n1 ;;
    codex) find "$2/node_modules" -path '*codex*' -type f -name codex -perm -u+x 2>/dev/null | grep -v '/bin/codex.js' | grep -v '/.bin/' | head -n1 ;;
  esac
}

# With arguments ("kind version package"), only that release (make drift).
if [ $# -eq 3 ]; then list() { echo "$1 $2 $3"; }; else list() { cat "$here/agents.txt" "$here/agents-unprofiled.txt"; }; fi

list "$@" | grep -v '^#' | while read -r kind version pkg; do
  [ -n "${kind:-}" ] || continue
  dir="$cache/$kind@$version"
  if [ -f "$dir/.installed" ] && [ -x "$dir/native" ]; then
    echo "agents: $kind $version already installed"
    continue
  fi
  echo "agents: installing $pkg@$version"
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && echo '{"private":true}' > package.json && npm install --no-audit --no-fund --loglevel=error "$pkg@$version" >/dev/null)
  bin=$(native_bin "$kind" "$dir")
  if [ -z "$bin" ]; then echo "agents: no native binary found for $kind $version" >&2; exit 1; fi
  ln -sfn "$bin" "$dir/native"
  # The npm entry point (a Node wrapper for Codex, the native binary for Claude Code).
  ln -sfn "$dir/node_modules/.bin/$kind" "$dir/entry"
  touch "$dir/.installed"
  echo "agents: $kind $version -> $bin"
done
echo "agents: cache $cache"
