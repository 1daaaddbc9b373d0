#!/usr/bin/env bash
# make profile-new AGENT=claude-code|codex VERSION=x: installs that release,
# captures its screens, and reads them with the nearest profile. When every
# screen reads as captured, the release gets its profile: one line deriving
# the nearest profile's value, its fixtures, its pin and its docs/agents.md row.
# Otherwise it lists what differs and changes nothing of the project.
set -euo pipefail
cd "$(dirname "$0")/.."
agent=${1:?AGENT (claude-code or codex)} version=${2:?VERSION}
case "$agent" in
  claude-code|claude) kind=claude pkg=@anthropic-ai/claude-code file=terminaldrivers/claude/profiles.go ;;
  codex) kind=codex pkg=@openai/codex file=terminaldrivers/codex/profiles.go ;;
  *) echo "profile-new: AGENT is claude-code or codex" >&2; exit 2 ;;
esac
if grep -q "^$kind $version " scripts/agents.txt; then echo "profile-new: $kind $version is pinned already" >&2; exit 2; fi
bash scripts/install-agents.sh "$kind" "$version" "$pkg"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
echo "profile-new: capturing $kind $version"
AKK_CAPTURE_FIXTURES=1 AKK_REQUIRE_AGENTS=1 AKK_CAPTURE_AGENT="$kind@$version" AKK_CAPTURE_DIR="$stage" \
  go test -count=1 -timeout 20m -run '^TestCaptureFixtures$' ./terminaldrivers/agenttest/ >"$stage/capture.log" 2>&1 ||
  { tail -30 "$stage/capture.log"; echo "profile-new: the capture failed" >&2; exit 1; }
if [ "$kind" = codex ]; then
  # Codex's async question panels (0.154.0 and later), read by the profile too.
  AKK_CAPTURE_ASYNC=1 AKK_REQUIRE_AGENTS=1 AKK_CAPTURE_AGENT="$kind@$version" AKK_CAPTURE_DIR="$stage" \
    go test -count=1 -timeout 20m -run '^TestCaptureAsyncFixtures$' ./terminaldrivers/agenttest/ >>"$stage/capture.log" 2>&1 ||
    { tail -30 "$stage/capture.log"; echo "profile-new: the async capture failed" >&2; exit 1; }
fi
echo "profile-new: reading its screens with the nearest profile"
if ! AKK_PROFILE_CANDIDATE="$kind@$version" AKK_PROFILE_CANDIDATE_DIR="$stage" \
  go test -count=1 -run '^TestProfileCandidate$' -v "./terminaldrivers/$kind/" >"$stage/check.log" 2>&1; then
  grep -E 'DIFFERS|NEAREST|candidate_test|FAIL' "$stage/check.log" | grep -v ' same ' || tail -20 "$stage/check.log"
  echo "profile-new: $kind $version differs from its nearest profile; nothing was changed"
  exit 1
fi
near=$(sed -n 's/.*NEAREST \([0-9.]*\).*/\1/p' "$stage/check.log" | head -1)
grep -o 'same .*' "$stage/check.log" || true
# The profile: the nearest's line in the Profiles list, taking the new version.
python3 - "$file" "$near" "$version" <<'PY'
import re, sys
path, near, new = sys.argv[1:]
src = open(path).read()
head, body = src.split("var Profiles = []Profile{", 1)
body, tail = body.split("\n}", 1)
lines = body.split("\n")
idx = next((i for i, l in enumerate(lines) if f'"{near}"' in l), None)
ident = "V" + near.replace(".", "_")
if idx is None:
    idx = next(i for i, l in enumerate(lines) if re.search(r"\b" + ident + r"\b(?!\.As)", l))
    line = re.sub(r"\b" + ident + r"\b(?!\.As)", f'{ident}.As("{new}")', lines[idx], count=1)
else:
    line = lines[idx].replace(f'"{near}"', f'"{new}"')
line = re.sub(r"\s*//.*$", "", line) + f" // as {near} (make profile-new)"
lines.insert(idx + 1, line)
open(path, "w").write(head + "var Profiles = []Profile{" + "\n".join(lines) + "\n}" + tail)
PY
gofmt -w "$file"
mkdir -p "terminaldrivers/testdata/screens/$kind"
rm -rf "terminaldrivers/testdata/screens/$kind/$version"
mv "$stage/$kind/$version" "terminaldrivers/testdata/screens/$kind/$version"
if [ -d "$stage/async/$version" ]; then
  rm -rf "terminaldrivers/testdata/async/$version"
  mv "$stage/async/$version" "terminaldrivers/testdata/async/$version"
fi
# The pin, after its kind's last pin; the release leaves the unprofiled list.
python3 - "$kind" "$version" "$pkg" "$near" <<'PY'
import sys
kind, new, pkg, near = sys.argv[1:]
p = "scripts/agents.txt"
def key(v):
    return tuple(int(x) for x in v.split("."))
def place(lines, prefix, version_of):
    # before the first line of the kind with a higher version, else after its last
    mine = [i for i, l in enumerate(lines) if l.startswith(prefix)]
    higher = [i for i in mine if key(version_of(lines[i])) > key(new)]
    return higher[0] if higher else mine[-1] + 1
lines = open(p).read().split("\n")
lines.insert(place(lines, kind + " ", lambda l: l.split()[1]), f"{kind} {new} {pkg}")
open(p, "w").write("\n".join(lines))
u = "scripts/agents-unprofiled.txt"
kept = [l for l in open(u).read().split("\n") if not l.startswith(f"{kind} {new} ")]
open(u, "w").write("\n".join(kept))
r = "docs/agents.md"
lines = open(r).read().split("\n")
row = lines[next(i for i, l in enumerate(lines) if l.startswith(f"| {kind} | {near} |"))]
lines.insert(place(lines, f"| {kind} | ", lambda l: l.split("|")[2].strip()), row.replace(f"| {kind} | {near} |", f"| {kind} | {new} |", 1))
open(r, "w").write("\n".join(lines))
PY
echo "profile-new: $kind $version reads as $near: added its profile ($file), fixtures, pin and docs/agents.md row; make test proves the rest (every grammar test of the profile now runs on its screens)"
