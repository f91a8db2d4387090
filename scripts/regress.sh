#!/usr/bin/env bash
# scripts/regress.sh — zsim's own regression gate: simulates every
# scenarios/*.json, records the runs in a fresh run store, writes the report
# (HTML, Markdown, charts, JUnit XML) and compares with reports/baseline.
#
#   scripts/regress.sh [extra 'zsim report' options, e.g. --tolerance 1%]
#   scripts/regress.sh --record-only        (used by update-baseline.sh)
#
# Environment: ZSIM (the binary; default ./zsim, then build-asan/zsim, then
# build/zsim), REGRESS_OUT (default reports/latest), REGRESS_BASELINE
# (default reports/baseline).
# Exit: 0 no drift; 4 drift (a regression, a newly infeasible scenario, a
# missing scenario, or with --strict any change beyond tolerance); 3 a bad
# input; 0 with "skipped" when this build has no 'zsim simulate' yet.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
cd "$root"

if [ -z "${ZSIM:-}" ]; then
  for c in ./zsim build-asan/zsim build/zsim; do
    if [ -x "$c" ]; then ZSIM="$c"; break; fi
  done
fi
if [ -z "${ZSIM:-}" ]; then
  echo "regress: no zsim binary (build it, or set ZSIM=path/to/zsim)" >&2
  exit 1
fi
if ! "$ZSIM" simulate --help >/dev/null 2>&1; then
  echo "regress: skipped: 'zsim simulate' is not available in this build yet ($ZSIM)" >&2
  exit 0
fi

record_only=0
if [ "${1:-}" = "--record-only" ]; then record_only=1; shift; fi
out="${REGRESS_OUT:-reports/latest}"
baseline="${REGRESS_BASELINE:-reports/baseline}"
db="$out/runs.db"

shopt -s nullglob
scenarios=(scenarios/*.json)
if [ ${#scenarios[@]} -eq 0 ]; then
  echo "regress: skipped: no scenarios/*.json" >&2
  exit 0
fi

mkdir -p "$out"
rm -f "$db" "$db-wal" "$db-shm"
# 'simulate --db' records directly; until it exists, the --json document is
# recorded with 'report --add' (the same record).
has_db=0
if "$ZSIM" simulate --help 2>/dev/null | grep -q -- '--db'; then has_db=1; fi
for s in "${scenarios[@]}"; do
  name="$(basename "$s" .json)"
  if [ $has_db = 1 ]; then
    "$ZSIM" simulate "$s" --json --db "$db" > "$out/$name.json"
  else
    "$ZSIM" simulate "$s" --json > "$out/$name.json"
    "$ZSIM" report --db "$db" --add "$out/$name.json" --scenario "$name" > /dev/null
  fi
done
echo "regress: recorded ${#scenarios[@]} scenario(s) in $db" >&2
[ $record_only = 1 ] && exit 0

exec "$ZSIM" report --db "$db" --out "$out" --baseline "$baseline" --strict \
     --junit "$out/junit.xml" "$@"
