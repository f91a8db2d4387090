#!/usr/bin/env python3
"""liger-fractions.py -- the achieved HBM bandwidth of the element-wise, norm,
RoPE and loss kernels, from Liger-Kernel's benchmark data (docs/kernels.md,
"Achieved bandwidth, measured").

Usage: scripts/liger-fractions.py DIR

DIR holds the three CSV files of linkedin/Liger-Kernel, named by the commit
they were read at (they are not committed here):
  h100_all_benchmark_data@3534d446.csv  benchmark/data/h100_all_benchmark_data.csv
                                        at 3534d4461ca89319e29c890c1a4c20cb2a615d5f
  a100_all_benchmark_data@bdbfeadf.csv  benchmark/data/a100_all_benchmark_data.csv
                                        at bdbfeadf9987bb7dcd4b0d54301dcdd5b935ebfe
  all_benchmark_data@2120862b.csv       benchmark/data/all_benchmark_data.csv
                                        at 2120862ba532c9449e72d603ba6324310ae756e7

Prints (1) what zsim charged each measured row before this change (its byte
count at membound_eff 0.39 of the GPU's datasheet bandwidth) against the
measured median, and (2) per kernel class, mode and pass, the fraction of the
datasheet bandwidth the kernels reach on the bytes sim/sched/kernels.c
counts, per GPU and their mean, which is what kernels.c k_frac holds.

The bytes per element below are counted from the code that ran (the
benchmark scripts at those commits, PyTorch's ATen ops and autograd
formulas, Liger's kernels); docs/kernels.md gives the counts op by op.
"""
import csv
import json
import os
import sys

# Datasheet HBM bandwidth of the GPUs the rows name (gpu_name column).
BW = {
    'NVIDIA H100 NVL': 3.9e12,        # H100 NVL: 3.9 TB/s per GPU (NVIDIA H100 datasheet)
    'NVIDIA A100 80GB PCIe': 1.935e12,  # A100 80GB PCIe: 1,935 GB/s (NVIDIA A100 datasheet)
    'NVIDIA A100-SXM4-80GB': 2.039e12,  # hwprofiles/gpus/a100-sxm-80gb.json
    'NVIDIA H100 80GB HBM3': 3.35e12,   # hwprofiles/gpus/h100-sxm-80gb.json
}
SHORT = {'NVIDIA H100 NVL': 'H100 NVL', 'NVIDIA A100 80GB PCIe': 'A100 PCIe',
         'NVIDIA A100-SXM4-80GB': 'A100 SXM', 'NVIDIA H100 80GB HBM3': 'H100 SXM'}
MEMBOUND_EFF = 0.39  # hw.h ZS_MEMBOUND_EFF before this change
CONTIG = 0.86        # the contiguous class, derived below (relu^2, eager)
MODES = {'huggingface': 'hf', 'torch': 'hf', 'liger': 'fused', 'torchcompile': 'compiled'}


def load(path, only=None):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            if r['metric_name'] != 'speed' or r['gpu_name'] not in BW:
                continue
            if only and r['kernel_name'] not in only:
                continue
            r['cfg'] = json.loads(r['extra_benchmark_config_str'])
            r['x'] = float(r['x_value'])
            r['ms'] = float(r['y_value_50'])
            rows.append(r)
    return rows


def rows_of(d):
    rows = load(os.path.join(d, 'h100_all_benchmark_data@3534d446.csv'))
    rows += load(os.path.join(d, 'a100_all_benchmark_data@bdbfeadf.csv'))
    rows += load(os.path.join(d, 'all_benchmark_data@2120862b.csv'),
                 only={'rms_norm', 'rope', 'cross_entropy', 'layer_norm',
                       'megatron_swiglu', 'relu_squared'})
    return rows


def ms(rows, gpu, kernel, provider, mode, x, cfg_has=None):
    for r in rows:
        if (r['gpu_name'] == gpu and r['kernel_name'] == kernel and
                r['kernel_provider'] == provider and
                r['kernel_operation_mode'] == mode and r['x'] == x and
                (cfg_has is None or cfg_has in r['cfg'])):
            return r['ms']
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: scripts/liger-fractions.py DIR')
    rows = rows_of(sys.argv[1])
    gpus = [g for g in BW]

    # --- (1) zsim before against the measurements, at the reference sizes
    # (kernel, provider, x, elements, zsim bytes fwd/bwd, cfg key)
    ref = [
        ('rms_norm', 16384, 2048 * 16384, {'hf': (36, 70), 'fused': (4, 6), 'compiled': (4, 6)}, 'M'),
        ('rope', 8192, 8192 * 8192 * 1.25, {'hf': (20, 30), 'fused': (4, 4), 'compiled': (4, 4)}, 'hidden_size'),
        ('layer_norm', 8192, 4096 * 8192, {'hf': (8, 12), 'fused': (8, 12), 'compiled': (8, 12)}, 'M'),
        ('cross_entropy', 131072, 16384 * 131072, {'hf': (14, 22), 'fused': (4, 0), 'compiled': (4, 4)}, 'B'),
    ]
    print('(1) zsim before (bytes / (0.39 x datasheet bandwidth)) against the measured median, ms')
    print('%-13s %-9s %-9s %-10s %9s %9s %6s' % ('kernel', 'mode', 'pass', 'GPU', 'zsim', 'measured', 'ratio'))
    for kernel, x, el, zb, key in ref:
        for prov in ('huggingface', 'liger', 'torchcompile'):
            mode = MODES[prov]
            for g in gpus:
                for p, zbytes in (('forward', zb[mode][0]), ('backward', zb[mode][1]),
                                  ('full', sum(zb[mode]))):
                    t = ms(rows, g, kernel, prov, p, x, key)
                    if t is None:
                        continue
                    z = zbytes * el / (BW[g] * MEMBOUND_EFF) * 1e3
                    print('%-13s %-9s %-9s %-10s %9.4f %9.4f %6.2f' %
                          (kernel, mode, p, SHORT[g], z, t, t / z if z else 0))

    # --- (2) fractions on kernels.c's bytes
    print('\n(2) fraction of datasheet bandwidth on kernels.c bytes (zsim), per GPU')

    def frac(el, zsim_b, model_b, bench_b, t_ms, bw):
        # the kernels of the model move model_b where the benchmark's moved
        # bench_b, at the rate measured: t_model = t * model_b / bench_b
        if t_ms is None or t_ms <= 0:
            return None
        return zsim_b * el / (t_ms * 1e-3 * model_b / bench_b * bw)

    out = {}

    def put(name, g, v):
        if v is not None:
            out.setdefault(name, {})[g] = v

    for g in gpus:
        bw = BW[g]
        # contiguous element-wise: relu(x)**2, eager, bf16, M 4096 x N 16384
        el = 4096 * 16384.0
        put('contig fwd', g, frac(el, 8, 8, 8, ms(rows, g, 'relu_squared', 'torch', 'forward', 16384), bw))
        put('contig bwd', g, frac(el, 20, 20, 20, ms(rows, g, 'relu_squared', 'torch', 'backward', 16384), bw))
        # RMSNorm, M 2048 x H 16384 (the benchmark's weight is fp32)
        el = 2048 * 16384.0
        for prov, f, b in (('huggingface', (36, 36, 38), (70, 92, 114)),
                           ('liger', (4, 4, 4), (6, 6, 6)),
                           ('torchcompile', (4, 4, 6), (6, 10, 20))):
            m = MODES[prov]
            put('rmsnorm %s fwd' % m, g, frac(el, *f, ms(rows, g, 'rms_norm', prov, 'forward', 16384), bw))
            put('rmsnorm %s bwd' % m, g, frac(el, *b, ms(rows, g, 'rms_norm', prov, 'backward', 16384), bw))
        # RoPE, seq 8192 x hidden 8192, 32 q and 8 kv heads (q + k = 1.25 x)
        el = 8192 * 8192 * 1.25
        for prov, f, b in (('huggingface', (20, 20, 20), (30, 30, 30)),
                           ('liger', (4, 4, 4), (4, 4, 4)),
                           ('torchcompile', (4, 4, 4), (4, 4, 8))):
            m = MODES[prov]
            put('rope %s fwd' % m, g, frac(el, *f, ms(rows, g, 'rope', prov, 'forward', 8192, 'hidden_size'), bw))
            put('rope %s bwd' % m, g, frac(el, *b, ms(rows, g, 'rope', prov, 'backward', 8192, 'hidden_size'), bw))
        # LayerNorm, M 4096 x N 8192, fp32 (the model's bf16 moves half);
        # backward = full - forward where no backward row exists
        el = 4096 * 8192.0
        for prov, m in (('huggingface', 'native'), ('torchcompile', 'compiled')):
            tf = ms(rows, g, 'layer_norm', prov, 'forward', 8192)
            tb = ms(rows, g, 'layer_norm', prov, 'backward', 8192)
            tfull = ms(rows, g, 'layer_norm', prov, 'full', 8192)
            if tb is None and tf is not None and tfull is not None:
                tb = tfull - tf
            put('layernorm %s fwd' % m, g, frac(el, 4, 4, 8, tf, bw))
            put('layernorm %s bwd' % m, g, frac(el, 6, 10, 20, tb, bw))
        # cross-entropy, 16384 x 131072 fp32 logits, mean; "full" accumulates
        # into the input's grad (12 B at the contiguous rate) after the
        # first call; backward = full - forward - that
        el = 16384 * 131072.0
        tacc = 12 * el / (CONTIG * bw) * 1e3
        for prov in ('huggingface', 'liger', 'torchcompile'):
            m = MODES[prov]
            tf = ms(rows, g, 'cross_entropy', prov, 'forward', 131072)
            tfull = ms(rows, g, 'cross_entropy', prov, 'full', 131072)
            if tf is None:
                continue
            if prov == 'huggingface':
                # log_softmax 8 B forward, nll grad + log_softmax backward 16 B;
                # the model adds the bf16 -> fp32 upcast (6 B) and the cast
                # back (6 B) at the contiguous rate
                fl = 8 * el / (tf * 1e-3 * bw)
                put('loss hf fwd', g, 14 / (6 / CONTIG + 8 / fl))
                if tfull is not None:
                    fb = 16 * el / ((tfull - tf - tacc) * 1e-3 * bw)
                    put('loss hf bwd', g, 22 / (16 / fb + 6 / CONTIG))
            elif prov == 'liger':
                # two passes over the row and the gradient written in place:
                # 12 B fp32, 6 B bf16; zsim counts 4 B
                put('loss fused fwd', g, frac(el, 4, 6, 12, tf, bw))
            else:
                put('loss compiled fwd', g, frac(el, 4, 4, 8, tf, bw))
                if tfull is not None:
                    put('loss compiled bwd', g, frac(el, 4, 4, 8, tfull - tf - tacc, bw))
        # SwiGLU, Liger's fused kernel (Megatron wrapper), 8192 tokens x
        # ffn 32768; backward = full - forward: out.sum() 2 B and the kernel
        # 10 B (dc, a, b in; da, db out)
        el = 8192 * 32768.0
        tf = ms(rows, g, 'megatron_swiglu', 'liger', 'forward', 32768)
        tfull = ms(rows, g, 'megatron_swiglu', 'liger', 'full', 32768)
        put('swiglu fused fwd', g, frac(el, 6, 6, 6, tf, bw))
        if tf is not None and tfull is not None:
            put('swiglu fused bwd', g, frac(el, 10, 10, 12, tfull - tf, bw))
        tf = ms(rows, g, 'megatron_swiglu', 'torch', 'forward', 32768)
        put('swiglu eager-chunked fwd', g, frac(el, 10, 10, 10, tf, bw))

    print('%-26s' % 'class' + ''.join('%11s' % SHORT[g] for g in gpus) + '%8s' % 'mean')
    for name in out:
        vals = [out[name].get(g) for g in gpus]
        have = [v for v in vals if v is not None]
        print('%-26s' % name + ''.join('%11s' % ('%.3f' % v if v is not None else '-') for v in vals) +
              '%8.2f' % (sum(have) / len(have)))


if __name__ == '__main__':
    main()
