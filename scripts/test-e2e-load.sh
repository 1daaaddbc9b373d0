#!/usr/bin/env bash
# The end-to-end suite with a CPU hog on every core, RUNS times in a row
# (default 3): the real-agent tests must hold on a busy machine.
# Needs stress-ng (Debian package stress-ng; installed when missing and
# apt-get is usable).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
if ! command -v stress-ng >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null
  else
    echo "stress-ng is not installed (apt-get install stress-ng)" >&2; exit 1
  fi
fi
cores=$(nproc)
for i in $(seq 1 "$runs"); do
  stress-ng --cpu "$cores" --quiet &
  hog=$!
  trap 'kill "$hog" 2>/dev/null || true' EXIT
  echo "== load run $i/$runs: stress-ng --cpu $cores (pid $hog)"
  start=$(date +%s)
  status=0
  # As make test runs them: packages two at a time, tests four at once.
  AKK_REQUIRE_AGENTS=1 go test -p 2 -parallel "${AKK_TEST_PARALLEL:-4}" -count=1 -timeout 60m -run '^TestE2E' ./... || status=$?
  kill "$hog" 2>/dev/null || true
  wait "$hog" 2>/dev/null || true
  trap - EXIT
  echo "== load run $i/$runs: exit $status after $(( $(date +%s) - start )) s"
  [ "$status" = 0 ] || exit "$status"
done
