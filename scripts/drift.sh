#!/usr/bin/env bash
# make drift: installs the registry's newest release of Claude Code and of
# Codex (or the releases given as kind@version arguments) into the agent
# cache and prints what works there (cmd/akkd TestDrift). A tool, not part
# of make test.
set -euo pipefail
cd "$(dirname "$0")/.."
pkg() { case "$1" in claude) echo @anthropic-ai/claude-code ;; codex) echo @openai/codex ;; *) echo "unknown agent $1" >&2; exit 2 ;; esac; }
releases=("$@")
if [ ${#releases[@]} -eq 0 ]; then
  for kind in claude codex; do releases+=("$kind@$(npm view "$(pkg "$kind")" version)"); done
fi
for r in "${releases[@]}"; do
  kind=${r%@*} version=${r#*@}
  bash scripts/install-agents.sh "$kind" "$version" "$(pkg "$kind")"
done
AKK_DRIFT=$(IFS=,; echo "${releases[*]}") go test -count=1 -timeout 30m -run '^TestDrift$' -v ./cmd/akkd/ | grep -E '^\||^(--- FAIL|FAIL|ok)|drift_test'
