#!/usr/bin/env bash
# The whole test suite: installs missing packages, builds zsim with
# AddressSanitizer + UndefinedBehaviorSanitizer, runs the Check unit tests,
# then the golden CLI tests against that build, then the regression gate over
# scenarios/ (scripts/regress.sh).  CI (.ci/run) runs exactly this.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
cd "$root"
scripts/install-deps.sh
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cmake -S . -B build-asan -DZS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DZS_PARTS= -DZS_CMDS= -DZS_TESTS= >/dev/null
if ! cmake --build build-asan -j "$(nproc)" >build-asan/build.log 2>&1; then
  grep -E 'error|warning' -A3 build-asan/build.log | head -60
  echo "test.sh: build failed (build-asan/build.log)"
  exit 1
fi
rc=0
build-asan/check_zsim || rc=1
ZSIM="$root/build-asan/zsim" tests/cli/run.sh || rc=1
# zsim's own regression gate: every scenario against reports/baseline
# (scripts/update-baseline.sh accepts new results; see README)
ZSIM="$root/build-asan/zsim" scripts/regress.sh || rc=1
exit $rc
