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
# Check kills a test after 4 s by default.  No test here is timed (zsim's
# speed is `zsim bench`'s business), but under ASan on a loaded 2-CPU machine
# test_huge_run_and_alloc_failures took longer than that and was killed, so a
# busy machine failed the suite; the limit stays only to catch a hang.
export CK_DEFAULT_TIMEOUT="${CK_DEFAULT_TIMEOUT:-300}"
cmake -S . -B build-asan -DZS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DZS_PARTS= -DZS_CMDS= -DZS_TESTS= -DZS_HARNESS=ON >/dev/null
if ! cmake --build build-asan -j "$(nproc)" >build-asan/build.log 2>&1; then
  grep -E 'error|warning' -A3 build-asan/build.log | head -60
  echo "test.sh: build failed (build-asan/build.log)"
  exit 1
fi
rc=0
# The README's first command builds a Release binary through ./zsim: its
# optimiser finds warnings (-Werror) the Debug build does not.
if ./zsim --version >/dev/null; then
  echo "release build (./zsim): ok"
else
  echo "release build (./zsim): FAILED"; rc=1
fi
build-asan/check_zsim || rc=1
ZSIM="$root/build-asan/zsim" tests/cli/run.sh || rc=1
# The CUDA harness (built only where nvcc is found) reads an exported
# schedule and replays its allocations without a GPU (--dry-run).
if [ -x build-asan/zsim-harness ]; then
  tmp="$(mktemp -d)"
  if build-asan/zsim schedule export --model 7b --gpus 1xH100 --offload-optimizer cpu \
       --offload-param cpu --out "$tmp/s.json" >/dev/null &&
     build-asan/zsim-harness --schedule "$tmp/s.json" --dry-run >"$tmp/dry.txt" 2>&1; then
    echo "harness: dry run of an exported schedule passed"
  else
    echo "harness: dry run FAILED"; cat "$tmp/dry.txt"; rc=1
  fi
  rm -rf "$tmp"
else
  echo "harness: not built (no nvcc): skipped"
fi
# zsim's own regression gate: every scenario against reports/baseline
# (scripts/update-baseline.sh accepts new results; see README)
ZSIM="$root/build-asan/zsim" scripts/regress.sh || rc=1
exit $rc
