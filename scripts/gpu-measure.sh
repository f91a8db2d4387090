#!/bin/bash
# gpu-measure.sh -- everything measured on the GPU host for issue 12, in one call.
# Usage (on the device machine, repo root): scripts/gpu-measure.sh SECTIONS...
#   host    : machine record + host rates (scripts/gpu/host_rates.py, adam_proxy.c)
#   build   : cmake -DZS_HARNESS=ON build of zsim + zsim-harness (build-gpu/)
#   matrix  : zsim schedule export + zsim-harness runs (validation/*.measured.json)
#   ref     : harness/fsdp2_reference.py runs
# Results under $OUT (R=$OUT/res, tarred into $OUT/results.tgz at the end).
set -u
export PKG_CONFIG_LIBDIR=$PWD/.deps/lib/pkgconfig LD_LIBRARY_PATH=$PWD/.deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # carried gsl/cjson/sqlite3 (Debian 12 builds)
OUT=${OUT:-/tmp/out}; R=$OUT/res; mkdir -p $R/validation $R/host $R/sched
log() { echo "== $(date -u +%T) $*"; }
record() {
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,pcie.link.gen.current,pcie.link.width.current --format=csv
    nvidia-smi; nvcc --version | tail -2; lscpu; free -g; numactl -H 2>/dev/null; uname -a
    python3 -c 'import torch;print("torch",torch.__version__,"cuda",torch.version.cuda,"threads",torch.get_num_threads());print(torch.__config__.parallel_info())'
    cmake --version | head -1; gcc --version | head -1; } > $R/machine.txt 2>&1
}
for sec in "$@"; do case $sec in
host)
  log host; record
  gcc -O3 -march=native -fopenmp -o /tmp/adam_proxy scripts/gpu/adam_proxy.c -lm
  timeout 60 /tmp/adam_proxy 268435456 1 2 4 8 16 > $R/host/adam_proxy.json 2> $R/host/adam_proxy.log; cat $R/host/adam_proxy.log
  timeout 130 python3 scripts/gpu/host_rates.py $R/host/host_rates.json adam
  timeout 60 python3 scripts/gpu/host_rates.py $R/host/host_rates.json pcie halloc
  timeout 120 python3 scripts/gpu/host_rates.py $R/host/host_rates.json procs
  ;;
build)
  log build
  (cmake -S . -B build-gpu -DZS_HARNESS=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "-DCMAKE_C_FLAGS=-Wno-error=format-truncation -Wno-error=stringop-truncation" && cmake --build build-gpu -j16 --target zsim zsim-harness) > $R/build.log 2>&1
  echo "build rc=$?"; grep -E 'error|zsim harness' $R/build.log | head -20; ls -la build-gpu/zsim build-gpu/zsim-harness
  ;;
matrix:*)
  log $sec
  Z=build-gpu/zsim; H=build-gpu/zsim-harness
  case ${sec#matrix:} in tiny) ms=validation/llama-tiny.json;; 1b) ms=validation/models/llama-3.2-1b.json;; 3b) ms=validation/models/llama-3.2-3b.json;; esac
  for m in $ms; do
    mn=$(basename $m .json)
    for cfg in "ds-none:deepspeed:none:none" "ds-opt:deepspeed:cpu:none" "ds-both:deepspeed:cpu:cpu" "fsdp2-none:fsdp2:none:none" "fsdp2-both:fsdp2:cpu:cpu"; do
      IFS=: read tag fw oo op <<< "$cfg"
      for ck in none full; do
        [ "$mn" != llama-tiny ] && [ "$ck" = none ] && [ "$tag" != ds-opt ] && continue
        name=h100-$mn-$tag-ck$ck; s=$R/sched/$name.schedule.json
        $Z schedule export --model $m --gpus 1xH100 --framework $fw --zero 3 --offload-optimizer $oo --offload-param $op \
           --checkpointing $ck --seq-len 2048 --micro-batch 1 --steps 3 --rank 0 --out $s > /dev/null 2>$R/sched/$name.err || { echo "$name export failed: $(cat $R/sched/$name.err)"; continue; }
        for al in caching cudamalloc; do
          timeout ${HTO:-90} $H --schedule $s --allocator $al --out $R/validation/$name-$al.measured.json > $R/validation/$name-$al.log 2>&1
          echo "$name $al rc=$? $(tail -1 $R/validation/$name-$al.log)"
        done
      done
    done
  done
  ;;
ref)
  log ref
  Z=build-gpu/zsim
  for run in "llama-tiny:validation/llama-tiny.json:2048:8:16:4:5632:32000:0" "llama-3.2-1b:validation/models/llama-3.2-1b.json:2048:16:32:8:8192:128256:1"; do
    IFS=: read mn m hid L nh kv inter voc tie <<< "$run"
    for off in 1 0; do
      oc=$([ $off = 1 ] && echo cpu || echo none)
      s=$R/sched/ref-$mn-off$off.schedule.json
      $Z schedule export --model $m --gpus 1xH100 --framework fsdp2 --zero 3 --offload-optimizer $oc --offload-param $oc \
         --checkpointing none --seq-len 2048 --micro-batch 1 --steps 5 --rank 0 --out $s > /dev/null
      for dt in bf16 fp32; do
        name=h100-$mn-fsdp2ref-off$off-$dt
        timeout 120 python3 harness/fsdp2_reference.py --model-name $mn --hidden $hid --layers $L --heads $nh --kv-heads $kv \
          --intermediate $inter --vocab $voc --tie $tie --seq-len 2048 --micro-batch 1 --steps 5 --offload $off --param-dtype $dt \
          --hardware 1xH100 --gpu H100-SXM-80GB --schedule $s --out $R/validation/$name.measured.json > $R/validation/$name.log 2>&1
        echo "$name rc=$? $(tail -2 $R/validation/$name.log)"
      done
    done
  done
  ;;
esac; done
log done
[ -n "${NOTAR:-}" ] || (cd $OUT && tar czf results.tgz res) ; cp $R/host/*.json $OUT/ 2>/dev/null; ls -la $OUT
