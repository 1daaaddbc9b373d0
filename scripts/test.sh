#!/usr/bin/env bash
# The project's test command (`make test`): vet, contract lint, generated-code
# check, and every Go test. With AKK_REQUIRE_AGENTS=1 / AKK_REQUIRE_TOOLS=1 a
# missing agent or Node tool fails the run instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=${AKK_NODE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/akk/node-tools}

echo "== go vet"
go vet ./...

echo "== contract lint"
if [ -x "$tools/node_modules/.bin/redocly" ]; then
  "$tools/node_modules/.bin/redocly" lint --config api/redocly.yaml api/openapi.yaml
elif [ "${AKK_REQUIRE_TOOLS:-}" = 1 ]; then
  echo "redocly is not installed (make node-tools)" >&2; exit 1
else
  echo "skipped: redocly is not installed (make node-tools)"
fi

echo "== agents"
if [ -f scripts/agents.txt ]; then
  grep -v '^#' scripts/agents.txt | while read -r kind version _; do
    [ -n "${kind:-}" ] && echo "pinned: $kind $version"
  done
fi

echo "== go test"
# One package at a time: each package already runs its agents two at a
# time, and more agents than that on two cores makes their screens late.
# (cmd/akkd takes about 34 min alone, 42 min on a busy machine.)
go test -p 1 -count=1 -timeout 60m ./...

echo "== go test, the store on PostgreSQL"
# The packages whose tests run on a real store, again on PostgreSQL (each
# starts a server of its own; the persistence and end-to-end tests above
# already ran both engines).
AKK_TEST_STORE=postgres go test -p 1 -count=1 -timeout 10m ./domain ./handlers ./callbacks ./cmd/akk
