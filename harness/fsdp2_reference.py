#!/usr/bin/env python3
"""fsdp2_reference.py -- an independent reference measurement for zsim.

Trains a small Llama-shaped model (built from its dimensions with torch.nn
only: no downloads) with PyTorch FSDP2 ``fully_shard`` + ``CPUOffloadPolicy``
on ONE GPU in a single-process process group, and records what zsim predicts:

  * peak device memory: torch.cuda.max_memory_allocated / max_memory_reserved
    over all steps (the first step included: AdamW state is allocated lazily
    there, as zsim models it);
  * peak host memory: process RSS sampled every 2 ms, minus the RSS before
    the model was built (after CUDA and the process group were initialised);
  * pinned host memory, when torch exposes host allocator statistics;
  * steady step time: mean of steps 2..N (step 1 if N = 1), the definition
    zsim uses (sim/formats/schedule_io.h).

It writes a zsim.measured/1 file of kind "fsdp2_reference" (no per-task times)
that ``zsim validate --measured FILE --schedule SCHEDULE`` compares with the
prediction in SCHEDULE (``zsim schedule export`` of the same configuration);
with ``--schedule`` here, the predictions are copied into the file instead.

Model per decoder layer (Llama): RMSNorm, q/k/v/o projections without bias
with grouped-query attention (SDPA, causal), RMSNorm, gated MLP (SiLU);
token embedding, final RMSNorm and an untied LM head.  Rotary embeddings are
left out: they hold no parameters and change neither memory nor time by more
than a few elementwise passes [assumption].

Requirements: torch >= 2.6 with CUDA (torch.distributed.fsdp.fully_shard).
Example (validation/README.md):
  python3 harness/fsdp2_reference.py --model-name llama-tiny --hidden 2048 \\
      --layers 8 --heads 16 --kv-heads 4 --intermediate 5632 --vocab 32000 \\
      --seq-len 2048 --micro-batch 1 --steps 5 --hardware 1xH100 \\
      --gpu H100-SXM-80GB --out validation/h100-fsdp2-tiny.measured.json
"""
import argparse
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import threading
import time


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model-name", required=True, help="name zsim knows the model by")
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--kv-heads", type=int, required=True)
    p.add_argument("--intermediate", type=int, required=True)
    p.add_argument("--vocab", type=int, required=True)
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--micro-batch", type=int, default=1)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--reshard-after-forward", type=int, choices=(0, 1), default=1,
                   help="1: zsim --zero 3 (default); 0: --zero 2")
    p.add_argument("--no-pin-memory", action="store_true",
                   help="CPUOffloadPolicy(pin_memory=False)")
    p.add_argument("--offload", type=int, choices=(0, 1), default=1,
                   help="1: CPUOffloadPolicy (parameters, gradients and optimizer on the host)")
    p.add_argument("--param-dtype", choices=("bf16", "fp32"), default="bf16",
                   help="compute dtype of gathered parameters (MixedPrecisionPolicy); masters are fp32")
    p.add_argument("--tie", type=int, choices=(0, 1), default=0, help="tie embedding and LM head")
    p.add_argument("--hardware", default="1xH100", help="zsim hardware spec")
    p.add_argument("--gpu", default="", help="zsim GPU profile name, e.g. H100-SXM-80GB")
    p.add_argument("--zsim-version", default="0.1.0")
    p.add_argument("--schedule", help="zsim schedule of the same run: copy its predictions")
    p.add_argument("--out", required=True, help="the measured file to write")
    a = p.parse_args(argv)
    for k in ("hidden", "layers", "heads", "kv_heads", "intermediate", "vocab",
              "seq_len", "micro_batch", "steps"):
        if getattr(a, k) < 1:
            p.error("--%s must be >= 1" % k.replace("_", "-"))
    if a.hidden % a.heads or a.heads % a.kv_heads:
        p.error("--hidden must divide by --heads, and --heads by --kv-heads")
    return a


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class RssSampler(threading.Thread):
    """Peak RSS, sampled every 2 ms on a daemon thread."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak = rss_bytes()
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_bytes())
            time.sleep(0.002)


def nvidia_smi(field):
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=" + field, "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0].strip() if out.returncode == 0 else ""
    except (OSError, IndexError, subprocess.SubprocessError):
        return ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def build_model(a, torch):
    nn = torch.nn
    F = torch.nn.functional
    head_dim = a.hidden // a.heads

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj = nn.Linear(a.hidden, a.heads * head_dim, bias=False)
            self.k_proj = nn.Linear(a.hidden, a.kv_heads * head_dim, bias=False)
            self.v_proj = nn.Linear(a.hidden, a.kv_heads * head_dim, bias=False)
            self.o_proj = nn.Linear(a.heads * head_dim, a.hidden, bias=False)

        def forward(self, x):
            b, s, _ = x.shape
            q = self.q_proj(x).view(b, s, a.heads, head_dim).transpose(1, 2)
            k = self.k_proj(x).view(b, s, a.kv_heads, head_dim).transpose(1, 2)
            v = self.v_proj(x).view(b, s, a.kv_heads, head_dim).transpose(1, 2)
            rep = a.heads // a.kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o_proj(o.transpose(1, 2).reshape(b, s, a.heads * head_dim))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj = nn.Linear(a.hidden, a.intermediate, bias=False)
            self.up_proj = nn.Linear(a.hidden, a.intermediate, bias=False)
            self.down_proj = nn.Linear(a.intermediate, a.hidden, bias=False)

        def forward(self, x):
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm = nn.RMSNorm(a.hidden, eps=1e-5)
            self.self_attn = Attention()
            self.post_attention_layernorm = nn.RMSNorm(a.hidden, eps=1e-5)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.self_attn(self.input_layernorm(x))
            return x + self.mlp(self.post_attention_layernorm(x))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(a.vocab, a.hidden)
            self.layers = nn.ModuleList(Layer() for _ in range(a.layers))
            self.norm = nn.RMSNorm(a.hidden, eps=1e-5)
            self.lm_head = nn.Linear(a.hidden, a.vocab, bias=False)

        def forward(self, ids):
            x = self.embed_tokens(ids)
            for layer in self.layers:
                x = layer(x)
            return self.lm_head(self.norm(x))

    m = Llama()
    if a.tie:
        m.lm_head.weight = m.embed_tokens.weight
    return m


def main(argv):
    a = parse_args(argv)
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard

    if not torch.cuda.is_available():
        sys.exit("fsdp2_reference.py: no CUDA device")
    predicted = None
    if a.schedule:
        with open(a.schedule) as f:
            sched = json.load(f)
        if sched.get("schema") != "zsim.schedule/1":
            sys.exit("fsdp2_reference.py: %s is not a zsim.schedule/1 file" % a.schedule)
        if sched["header"]["model"] != a.model_name:
            sys.exit("fsdp2_reference.py: %s is for model %r, not %r"
                     % (a.schedule, sched["header"]["model"], a.model_name))
        predicted = sched.get("predicted")
        a.gpu = a.gpu or sched["header"].get("gpu", "")

    # A single-process process group on this GPU.
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=0, world_size=1)
    mesh = init_device_mesh("cuda", (1,))
    torch.cuda.synchronize()
    free0, total = torch.cuda.mem_get_info()
    rss0 = rss_bytes()
    sampler = RssSampler()
    sampler.start()

    # Parameters are created in fp32 on the CPU, then sharded and offloaded:
    # FSDP2 keeps fp32 master shards on the host (pinned) and gathers bf16.
    torch.manual_seed(0)
    model = build_model(a, torch)
    pdt = torch.bfloat16 if a.param_dtype == "bf16" else torch.float32
    mp = MixedPrecisionPolicy(param_dtype=pdt, reduce_dtype=torch.float32)
    if a.offload:
        off = CPUOffloadPolicy(pin_memory=not a.no_pin_memory)
    else:
        from torch.distributed.fsdp import OffloadPolicy
        off = OffloadPolicy()
        model = model.cuda()
    for layer in model.layers:
        fully_shard(layer, mesh=mesh, mp_policy=mp, offload_policy=off,
                    reshard_after_forward=bool(a.reshard_after_forward))
    fully_shard(model, mesh=mesh, mp_policy=mp, offload_policy=off,
                reshard_after_forward=bool(a.reshard_after_forward))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    torch.cuda.reset_peak_memory_stats()
    used_peak = 0
    ends = []
    t0 = time.perf_counter()
    for _ in range(a.steps):
        ids = torch.randint(0, a.vocab, (a.micro_batch, a.seq_len), device="cuda")
        logits = model(ids)
        loss = torch.nn.functional.cross_entropy(
            logits.float().view(-1, a.vocab), ids.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        ends.append(time.perf_counter() - t0)
        free, _ = torch.cuda.mem_get_info()
        used_peak = max(used_peak, free0 - free)
    sampler.stop.set()
    sampler.join()

    if len(ends) == 1:
        step_s = ends[0]
    else:
        step_s = (ends[-1] - ends[0]) / (len(ends) - 1)
    pinned = -1
    host_stats = getattr(torch.cuda, "host_memory_stats", None)
    if host_stats is not None:
        try:
            pinned = int(host_stats().get("reserved_bytes.all.peak", -1))
        except (RuntimeError, AttributeError, TypeError):
            pinned = -1

    env = {
        "gpu": torch.cuda.get_device_name(0),
        "driver": nvidia_smi("driver_version"),
        "cuda": torch.version.cuda or "",
        "sm_clock_mhz": int(nvidia_smi("clocks.sm") or 0),
        "mem_clock_mhz": int(nvidia_smi("clocks.mem") or 0),
        "host": socket.gethostname()[:63],
        "cpu": cpu_model()[:95],
        "cpu_threads": os.cpu_count() or 0,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "allocator": "torch",
        "tool": ("torch " + torch.__version__)[:63],
    }
    # The reader rejects empty strings: leave unknown ones out.
    env = {k: v for k, v in env.items() if v != ""}
    config = ("fsdp2 reference: hidden %d, layers %d, heads %d/%d, intermediate %d, vocab %d, "
              "seq %d, mb %d, reshard %d, pin %d, offload %d, param dtype %s, tie %d"
              % (a.hidden, a.layers, a.heads, a.kv_heads, a.intermediate, a.vocab, a.seq_len,
                 a.micro_batch, a.reshard_after_forward, 0 if a.no_pin_memory else 1,
                 a.offload, a.param_dtype, a.tie))
    header = {"zsim_version": a.zsim_version, "model": a.model_name, "hardware": a.hardware,
              "framework": "fsdp2", "config": config[:255], "rank": 0, "world": 1,
              "steps": a.steps}
    if a.gpu:
        header["gpu"] = a.gpu
    doc = {
        "schema": "zsim.measured/1",
        "kind": "fsdp2_reference",
        "header": header,
        "environment": env,
        "predicted": predicted,
        "measured": {
            "peak_device_allocated_bytes": int(torch.cuda.max_memory_allocated()),
            "peak_device_reserved_bytes": int(torch.cuda.max_memory_reserved()),
            "peak_device_used_bytes": int(used_peak),
            "peak_host_bytes": int(sampler.peak - rss0),
            "peak_pinned_bytes": pinned,
            "step_time_ns": int(round(step_s * 1e9)),
            "scratch_device_bytes": -1,
        },
        "tasks": [],
    }
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, a.out)
    print("%s: step %.1f ms, peak allocated %d, reserved %d, host +%d bytes; wrote %s"
          % (a.model_name, step_s * 1e3, doc["measured"]["peak_device_allocated_bytes"],
             doc["measured"]["peak_device_reserved_bytes"], doc["measured"]["peak_host_bytes"],
             a.out))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
