#!/usr/bin/env bash
# scripts/update-baseline.sh — the one command to accept zsim's current
# results as the new regression baseline: runs every scenarios/*.json
# (scripts/regress.sh --record-only), then rewrites reports/baseline/ from
# those runs (a scenario removed from scenarios/ loses its baseline file).
# Review `git diff reports/baseline` and commit it with the change that
# explains the drift.
#
# Every accepted change carries its reason (issue 13): the script prints,
# per baseline file, which numbers moved and by how much
# (scripts/golden-diff.py), and when anything moved it needs
#   NOTE='why the numbers moved' scripts/update-baseline.sh
# which it appends with the moves to reports/baseline/CHANGES.md.  Without a
# NOTE (asked for when stdin is a terminal) the old baseline is put back and
# the script exits 1: nothing is accepted unexplained.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
cd "$root"
out="${REGRESS_OUT:-reports/latest}"
baseline="${REGRESS_BASELINE:-reports/baseline}"
if [ -z "${ZSIM:-}" ]; then
  for c in ./zsim build-asan/zsim build/zsim; do
    if [ -x "$c" ]; then ZSIM="$c"; break; fi
  done
fi
export ZSIM REGRESS_OUT="$out"
if ! "${ZSIM:?no zsim binary: set ZSIM}" simulate --help >/dev/null 2>&1; then
  echo "update-baseline: 'zsim simulate' is not available in this build yet ($ZSIM)" >&2
  exit 1
fi
scripts/regress.sh --record-only
mkdir -p "$baseline"
old="$(mktemp -d)"; trap 'rm -rf "$old"' EXIT
shopt -s nullglob
for f in "$baseline"/*.json; do cp "$f" "$old/"; done
rm -f "$baseline"/*.json
"$ZSIM" report --db "$out/runs.db" --write-baseline "$baseline"

# what moved, file by file
moves="$old/moves.txt"; : >"$moves"
for f in "$old"/*.json "$baseline"/*.json; do
  b="$(basename "$f")"
  grep -qxF "$b" "$old/seen" 2>/dev/null && continue
  echo "$b" >>"$old/seen"
  python3 scripts/golden-diff.py "$old/$b" "$baseline/$b" "$b" >>"$moves" || true
done
if [ ! -s "$moves" ]; then
  echo "update-baseline: no baseline number moved" >&2
  exit 0
fi
cat "$moves"
note="${NOTE:-}"
if [ -z "$note" ] && [ -t 0 ]; then
  read -r -p "update-baseline: why did these numbers move? " note
fi
if [ -z "$note" ]; then
  rm -f "$baseline"/*.json
  for f in "$old"/*.json; do cp "$f" "$baseline/"; done
  echo "update-baseline: baseline numbers moved (above) and no NOTE says why; the old baseline is kept." >&2
  echo "update-baseline: accept them with NOTE='why they moved' scripts/update-baseline.sh" >&2
  exit 1
fi
{
  [ -s "$baseline/CHANGES.md" ] || printf '# Why the baseline moved\n\nOne entry per accepted change, newest last, written by scripts/update-baseline.sh.\n'
  printf '\n## %s (on %s)\n\n%s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" \
    "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$note"
  sed 's/^/    /' "$moves"
} >>"$baseline/CHANGES.md"
echo "update-baseline: noted in $baseline/CHANGES.md; review with 'git diff --stat $baseline' and commit it" >&2
