#!/usr/bin/env bash
# scripts/plan-fast-identity.sh ZSIM — checks that the planner's fast path
# (the text output stops most GPU-OOM candidates at their OOM, plan.h
# ZS_PLAN_COMPLETE_SHOWN) prints what its slow path prints (every candidate
# simulated whole, forced by ZSIM_PLAN_FULL=1): runs scripts/plan-identity.sh
# with ZSIM under ZSIM_PLAN_FULL=1 as the old binary and ZSIM as the new one
# (25 plans, text and --json).  Exits 1 if any plan differs.
set -uo pipefail
zsim="$(readlink -f "${1:?usage: plan-fast-identity.sh ZSIM}")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\nZSIM_PLAN_FULL=1 exec "%s" "$@"\n' "$zsim" >"$tmp/slow"
chmod +x "$tmp/slow"
"$here/plan-identity.sh" "$tmp/slow" "$zsim"
