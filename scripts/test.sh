#!/usr/bin/env bash
# The project's test command (`make test`): vet, contract lint, generated-code
# check, and every Go test. With AKK_REQUIRE_AGENTS=1 / AKK_REQUIRE_TOOLS=1 a
# missing agent or Node tool fails the run instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
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

echo "== PostgreSQL"
# One server for the whole run: every package that runs its store on
# PostgreSQL makes its databases there (storetest.SharedEnv).
pgtmp=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; [ -n "${pg:-}" ] && wait "$pg" 2>/dev/null; rm -rf "$pgtmp"' EXIT
go build -o "$pgtmp/pgserve" ./persistence/storetest/pgserve
mkfifo "$pgtmp/in"
"$pgtmp/pgserve" <"$pgtmp/in" >"$pgtmp/out" &
pg=$!
exec 3>"$pgtmp/in" # its input: closing it stops the server
while [ ! -s "$pgtmp/out" ] && kill -0 "$pg" 2>/dev/null; do sleep 0.1; done
if [ -s "$pgtmp/out" ]; then
  export AKK_TEST_POSTGRES_DIR="$(head -1 "$pgtmp/out")"
  echo "one server for the run"
else
  pg=
  echo "none: the packages that need it say why"
fi

echo "== go test"
# The packages whose tests run on a real store run again on PostgreSQL (on
# the run's one server; the persistence and end-to-end tests already run
# both engines), beside the main run: its output is printed after it. In
# the main run the domain's tests use the store in memory, the others SQLite.
AKK_TEST_STORE=postgres go test -p 1 -count=1 -timeout 10m ./domain ./handlers ./callbacks ./cmd/akk >"$pgtmp/pg-pass.log" 2>&1 &
pgpass=$!
# Packages two at a time, and in each up to AKK_TEST_PARALLEL tests at once
# (each end-to-end test leases one agent's world, world_test.go): the
# fastest without late screens on two cores, measured (docs/TESTING.md, "The test command, times and the inventory").
# The JSON is kept for the inventory (make test-inventory).
mkdir -p .test-results
go build -o "$pgtmp/inventory" ./scripts/inventory
rc=0
go test -json -p 2 -parallel "${AKK_TEST_PARALLEL:-4}" -count=1 -timeout 40m ./... | "$pgtmp/inventory" -tee .test-results/go-test.json || rc=$?

echo "== go test, the store on PostgreSQL"
pgrc=0
wait "$pgpass" || pgrc=$?
cat "$pgtmp/pg-pass.log"
[ "$rc" = 0 ] || exit "$rc"
[ "$pgrc" = 0 ] || exit "$pgrc"

echo "== inventory: each end-to-end test and the agent versions it passed on"
"$pgtmp/inventory" -floor "$(grep -v '^#' scripts/test-floor.txt)" .test-results/go-test.json
echo "== make test took $(( $(date +%s) - started )) s"
