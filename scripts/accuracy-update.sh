#!/bin/sh
# accuracy-update.sh — rewrite validation/published/accuracy.json (the errors
# the CI gate compares against) from the current zsim, and print which errors
# moved.  Run after a change that is meant to move predictions (e.g. after
# merging a branch), check the printed moves, then commit the file with them
# in the commit message.
#   ZSIM=build-dbg/zsim scripts/accuracy-update.sh
set -eu
cd "$(dirname "$0")/.."
ZSIM=${ZSIM:-./zsim}
"$ZSIM" validate --published validation/published \
    --write-accuracy validation/published/accuracy.json
