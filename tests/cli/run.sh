#!/usr/bin/env bash
# Golden end-to-end tests of the CLI (STYLE 26).  Each case in tests/golden/ is
#   NAME.args  the arguments to zsim, one line, shell-quoted
#   NAME.out   the exact expected stdout
#   NAME.err   the exact expected stderr (absent: stderr must be empty)
#   NAME.rc    the expected exit status (absent: 0)
#   NAME.env   optional extra environment, e.g. LC_ALL=de_DE.UTF-8
#   NAME.stdout optional file that stdout goes to instead, e.g. /dev/full to
#              check that a failed write exits 1 with a message (NAME.out then
#              holds what reached the capture: nothing)
# Cases run from the source root.  UPDATE_GOLDEN=1 rewrites .out/.err/.rc
# from the current binary and prints, per changed case, which numbers moved
# and by how much (scripts/golden-diff.py); review the diff before committing.
set -uo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
cd "$root"
ZSIM="${ZSIM:-$root/build-asan/zsim}"
# wall-clock figures (plan's elapsed time) print as 0 under ZSIM_GOLDEN
export ZSIM_GOLDEN=1
pass=0; fail=0; nchanged=0; tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
for args in tests/golden/*.args; do
  [ -e "$args" ] || continue
  name="${args%.args}"; base="$(basename "$name")"
  want_rc=0; [ -f "$name.rc" ] && want_rc="$(cat "$name.rc")"
  envs=(); [ -f "$name.env" ] && read -r -a envs < "$name.env"
  eval "set -- $(cat "$args")"
  to="$tmp/out"; : >"$tmp/out"; [ -f "$name.stdout" ] && to="$(cat "$name.stdout")"
  env ${envs[@]+"${envs[@]}"} "$ZSIM" "$@" >"$to" 2>"$tmp/err" </dev/null
  got_rc=$?
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
    # say what moved, case by case, before overwriting (scripts/golden-diff.py)
    old_rc=0; [ -f "$name.rc" ] && old_rc="$(cat "$name.rc")"
    changed=0
    python3 scripts/golden-diff.py "$name.out" "$tmp/out" "$base.out" || changed=1
    if [ -f "$name.err" ] || [ -s "$tmp/err" ]; then
      python3 scripts/golden-diff.py "$name.err" "$tmp/err" "$base.err" || changed=1
    fi
    [ "$old_rc" = "$got_rc" ] || { echo "$base: exit $old_rc -> $got_rc"; changed=1; }
    [ $changed = 1 ] && nchanged=$((nchanged+1))
    cp "$tmp/out" "$name.out"
    if [ -s "$tmp/err" ]; then cp "$tmp/err" "$name.err"; else rm -f "$name.err"; fi
    if [ "$got_rc" != 0 ]; then echo "$got_rc" > "$name.rc"; else rm -f "$name.rc"; fi
    pass=$((pass+1)); continue
  fi
  ok=1
  [ "$got_rc" = "$want_rc" ] || { echo "FAIL $base: exit $got_rc, want $want_rc"; ok=0; }
  if ! cmp -s "$tmp/out" "$name.out"; then echo "FAIL $base: stdout differs"; diff -u "$name.out" "$tmp/out" | head -20; ok=0; fi
  if [ -f "$name.err" ]; then
    cmp -s "$tmp/err" "$name.err" || { echo "FAIL $base: stderr differs"; diff -u "$name.err" "$tmp/err" | head -20; ok=0; }
  elif [ -s "$tmp/err" ]; then echo "FAIL $base: unexpected stderr"; head -5 "$tmp/err"; ok=0; fi
  if [ $ok = 1 ]; then pass=$((pass+1)); else fail=$((fail+1)); fi
done
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
  echo "cli: $pass cases regenerated, $nchanged changed (listed above)"
  exit 0
fi
echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
