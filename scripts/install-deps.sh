#!/usr/bin/env bash
# Installs what zsim needs from Debian's packages, only when something is
# missing.  Progress goes to stderr; stdout stays clean for zsim's output.
#   cmake, gcc, make, pkg-config  build
#   libgsl-dev     GEMM-efficiency and bandwidth curves (interpolation), least squares in calibrate
#   libcjson-dev   every JSON input and output
#   libsqlite3-dev the run store behind --db and reports
#   check          the unit-test framework
#   gnuplot-nox    charts in reports and --plot (run as an external program)
set -euo pipefail

need=()
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v make >/dev/null 2>&1 || need+=(make)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v git >/dev/null 2>&1 || need+=(git)
if command -v pkg-config >/dev/null 2>&1; then
  have_pc gsl || need+=(libgsl-dev)
  have_pc libcjson || need+=(libcjson-dev)
  have_pc sqlite3 || need+=(libsqlite3-dev)
  have_pc check || need+=(check)
else
  need+=(libgsl-dev libcjson-dev libsqlite3-dev check)
fi
command -v gnuplot >/dev/null 2>&1 || need+=(gnuplot-nox)

[ ${#need[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "zsim: missing packages: ${need[*]} (run as root or install them)" >&2
    exit 1
  fi
fi
echo "zsim: installing ${need[*]} (first use)..." >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
