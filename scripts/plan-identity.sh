#!/usr/bin/env bash
# scripts/plan-identity.sh OLD_ZSIM NEW_ZSIM — checks that a change meant to
# be pure speed leaves the planner's output byte-identical: runs 25 plans
# (varied models, GPUs, methods, frameworks, objectives, allocator settings,
# fixed dimensions, a nothing-fits case and a bad-input case) with both
# binaries, as text and as --json (every candidate's verdict, reason and
# steady step), and compares stdout, stderr and the exit code.  Prints each
# plan that differs; exits 1 if any does.  ZSIM_GOLDEN=1 zeroes the one
# wall-clock figure.  Takes minutes on a 2-core machine.
set -uo pipefail
old="${1:?usage: plan-identity.sh OLD_ZSIM NEW_ZSIM}"
new="${2:?usage: plan-identity.sh OLD_ZSIM NEW_ZSIM}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
plans=(
  "--model 72b --gpus 8xH100"
  "--model 72b --gpus 8xH100 --host-ram 512GiB"
  "--model 72b --gpus 8xH100 --host-ram 1TiB"
  "--model 7b --gpus 8xH100"
  "--model 7b --gpus 8xH100 --method lora"
  "--model gpt2 --gpus 1xH100"
  "--model phi-2 --gpus 4xA100-80GB"
  "--model llama-3-8b --gpus 8xH100 --framework any"
  "--model mistral-7b --gpus 8xL40S"
  "--model qwen2.5-14b --gpus 8xH100 --framework fsdp2"
  "--model falcon-40b --gpus 2x8xH100"
  "--model mixtral-8x7b --gpus 8xH100"
  "--model gemma-2b --gpus 2xA100-80GB --seq-len 2048"
  "--model llama-2-70b --gpus 8xA100-80GB"
  "--model 7b --gpus 8xH100 --alloc-conf expandable_segments"
  "--model 7b --gpus 8xH100 --objective memory"
  "--model 7b --gpus 8xH100 --objective cost"
  "--model qwen3-30b-a3b --gpus 8xH100"
  "--model opt-6.7b --gpus 4xH100 --global-batch 32"
  "--model 72b --gpus 8xH100 --method qlora"
  "--model yi-34b --gpus 8xH100 --framework any --procs 8"
  "--model 7b --gpus 8xH100 --framework fsdp2 --offload-optimizer cpu --offload-param cpu --micro-batch 8 --checkpointing full --procs 8"
  "--model 7b --gpus 8xH100 --method lora --gpu-reserved 70GiB --gpu-reserved-gpus 4"
  "--model llama-3.1-405b --gpus 4x8xH100"
  "--model bloom --gpus 8xH100"
)
bad=0
i=0
for p in "${plans[@]}"; do
  i=$((i + 1))
  for fmt in text json; do
    extra=()
    [ "$fmt" = json ] && extra=(--json)
    for b in old new; do
      bin="$old"
      [ "$b" = new ] && bin="$new"
      # shellcheck disable=SC2086
      ZSIM_GOLDEN=1 "$bin" plan $p "${extra[@]}" >"$tmp/$b.out" 2>"$tmp/$b.err"
      echo $? >"$tmp/$b.rc"
    done
    if ! cmp -s "$tmp/old.out" "$tmp/new.out" ||
       ! cmp -s "$tmp/old.err" "$tmp/new.err" ||
       ! cmp -s "$tmp/old.rc" "$tmp/new.rc"; then
      echo "DIFFERS ($fmt): zsim plan $p"
      bad=1
    fi
  done
done
[ "$bad" = 0 ] && echo "plan-identity: ${#plans[@]} plans identical (text and JSON)"
exit "$bad"
