#!/usr/bin/env bash
# scripts/update-baseline.sh — the one command to accept zsim's current
# results as the new regression baseline: runs every scenarios/*.json
# (scripts/regress.sh --record-only), then rewrites reports/baseline/ from
# those runs (a scenario removed from scenarios/ loses its baseline file).
# Review `git diff reports/baseline` and commit it with the change that
# explains the drift.
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
rm -f "$baseline"/*.json
"$ZSIM" report --db "$out/runs.db" --write-baseline "$baseline"
echo "update-baseline: review with 'git diff --stat $baseline' and commit it" >&2
