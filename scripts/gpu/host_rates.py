#!/usr/bin/env python3
"""Host-side rates on the GPU host (validation/host/): CPU AdamW (torch for-loop
and fused), grad unscale mul_, fp32->bf16 copy_, at 1..16 threads, several
processes at once; pinned/pageable H2D/D2H bandwidth; cudaHostAlloc time.
Usage: host_rates.py OUT.json [section ...]  (sections: adam ops procs pcie halloc)"""
import json, os, sys, time, subprocess, multiprocessing as mp
import torch

N_TOTAL = 256 * 1024 * 1024  # elements, realistic mix of shapes

def make_params(total):
    # ~100 tensors shaped like a 3B Llama layer stack (hidden 3072, inter 8192, kv 1024) + one big embedding
    shapes = []
    big = 128256 * 3072 // 4  # one big tensor (quarter of the 3B embedding, 98M elements)
    shapes.append((big,))
    rest = total - big
    layer = [(3072 * 3072,), (1024 * 3072,), (1024 * 3072,), (3072 * 3072,), (8192 * 3072,), (8192 * 3072,), (3072 * 8192,), (3072,), (3072,)]
    while rest > 0:
        for s in layer:
            n = min(s[0], rest)
            if n <= 0: break
            shapes.append((n,)); rest -= n
    ps = [torch.zeros(s, dtype=torch.float32).uniform_(-0.1, 0.1).requires_grad_(True) for s in shapes]
    for p in ps:
        p.grad = torch.randn_like(p) * 1e-3
    return ps

def time_adam(ps, fused, steps=3):
    kw = {"lr": 1e-4, "weight_decay": 0.01}
    if fused: kw["fused"] = True
    else: kw["foreach"] = False
    opt = torch.optim.AdamW(ps, **kw)
    opt.step()  # allocates state (lazy), not timed
    ts = []
    for _ in range(steps):
        t = time.perf_counter(); opt.step(); ts.append(time.perf_counter() - t)
    return min(ts), sorted(ts)[len(ts)//2]

def adam_section(res, n_total):
    ps = make_params(n_total)
    n = sum(p.numel() for p in ps)
    res["adam_elements"] = n; res["adam_tensors"] = len(ps)
    # default for CPU params: _default_to_fused_or_foreach returns foreach only for CUDA-native tensors
    from torch.optim.optimizer import _default_to_fused_or_foreach
    res["default_fused_foreach_on_cpu"] = list(_default_to_fused_or_foreach(ps, False, False))
    out = []
    for fused in (False, True):
        for th in (1, 2, 4, 8, 16):
            torch.set_num_threads(th)
            steps = 2 if th <= 2 else 3
            tmin, tmed = time_adam(ps, fused, steps)
            r = {"impl": "torch.optim.AdamW fused=True" if fused else "torch.optim.AdamW foreach=False (for-loop default on CPU)",
                 "threads": th, "step_s_min": tmin, "step_s_median": tmed, "ns_per_element": tmin / n * 1e9,
                 "effective_GBps_at_28B_per_element": n * 28 / tmin / 1e9}
            print("adam fused=%d threads=%2d  %.3f s  %.3f ns/el  %.1f GB/s@28B" % (fused, th, tmin, r["ns_per_element"], r["effective_GBps_at_28B_per_element"]), flush=True)
            out.append(r)
    res["adam"] = out
    # grad unscale and fp32->bf16 copy (torch CPU ops), on one big flat buffer
    g = torch.randn(n_total); bf = torch.empty(n_total, dtype=torch.bfloat16)
    ops = []
    for th in (1, 2, 4, 8, 16):
        torch.set_num_threads(th)
        for name, fn, bpe in (("grad unscale g.mul_(s) fp32", lambda: g.mul_(0.5), 8),
                              ("copy_ fp32->bf16", lambda: bf.copy_(g), 6)):
            fn(); ts = []
            for _ in range(3):
                t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
            tm = min(ts)
            ops.append({"op": name, "threads": th, "elements": n_total, "s_min": tm, "ns_per_element": tm / n_total * 1e9,
                        "GBps_at_%dB_per_element" % bpe: n_total * bpe / tm / 1e9})
            print("%-30s threads=%2d %.3f ns/el %.1f GB/s" % (name, th, tm / n_total * 1e9, n_total * bpe / tm / 1e9), flush=True)
    res["ops"] = ops

def _proc(args):
    th, fused, n, q = args
    torch.set_num_threads(th)
    ps = make_params(n)
    kw = {"lr": 1e-4}
    if fused: kw["fused"] = True
    else: kw["foreach"] = False
    opt = torch.optim.AdamW(ps, **kw); opt.step()
    q.get()  # barrier-ish: wait for go
    t = time.perf_counter(); opt.step(); opt.step(); dt = (time.perf_counter() - t) / 2
    return dt

def procs_section(res, n_total):
    out = []
    ctx = mp.get_context("spawn")
    for nproc in (2, 4, 8):
        n = n_total // nproc  # same total work split over processes... plus per-process full size below
        for th in (16 // nproc, 16):
            for fused in (False, True):
                with ctx.Manager() as m:
                    q = m.Queue()
                    with ctx.Pool(nproc) as pool:
                        ar = pool.map_async(_proc, [(th, fused, n, q) for _ in range(nproc)])
                        time.sleep(2 + n / 2e7)
                        for _ in range(nproc): q.put(1)
                        dts = ar.get(timeout=600)
                tot = n * nproc
                r = {"processes": nproc, "threads_per_process": th, "fused": fused, "elements_per_process": n,
                     "step_s_max": max(dts), "step_s_each": dts,
                     "aggregate_ns_per_element": max(dts) / tot * 1e9,
                     "aggregate_GBps_at_28B": tot * 28 / max(dts) / 1e9}
                print("procs=%d threads=%2d fused=%d  max step %.3f s  aggregate %.3f ns/el %.1f GB/s" % (nproc, th, fused, max(dts), r["aggregate_ns_per_element"], r["aggregate_GBps_at_28B"]), flush=True)
                out.append(r)
    res["adam_processes"] = out

def pcie_section(res):
    dev = torch.device("cuda")
    out = []
    for mib in (64, 256, 1024):
        nb = mib << 20
        d1 = torch.empty(nb, dtype=torch.uint8, device=dev); d2 = torch.empty(nb, dtype=torch.uint8, device=dev)
        for pinned in (True, False):
            h1 = torch.empty(nb, dtype=torch.uint8, pin_memory=pinned).fill_(1)
            h2 = torch.empty(nb, dtype=torch.uint8, pin_memory=pinned).fill_(1)
            s1 = torch.cuda.Stream(); s2 = torch.cuda.Stream()
            def timeit(fn, reps=5):
                fn(); torch.cuda.synchronize(); ts = []
                for _ in range(reps):
                    t = time.perf_counter(); fn(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
                return min(ts)
            def h2d():
                with torch.cuda.stream(s1): d1.copy_(h1, non_blocking=pinned)
            def d2h():
                with torch.cuda.stream(s2): h2.copy_(d2, non_blocking=pinned)
            def both():
                h2d(); d2h()
            t_h2d = timeit(h2d); t_d2h = timeit(d2h)
            if pinned:
                t_both = timeit(both); both_gbps = 2 * nb / t_both / 1e9
            else:
                # pageable copies are synchronous w.r.t. the host: run each direction on its own thread
                import threading
                def both_threads():
                    th = [threading.Thread(target=h2d), threading.Thread(target=d2h)]
                    [x.start() for x in th]; [x.join() for x in th]
                t_both = timeit(both_threads); both_gbps = 2 * nb / t_both / 1e9
            r = {"bytes": nb, "host": "pinned" if pinned else "pageable", "h2d_GBps": nb / t_h2d / 1e9,
                 "d2h_GBps": nb / t_d2h / 1e9, "bidirectional_aggregate_GBps": both_gbps,
                 "bidirectional_s": t_both}
            print("%5d MiB %-8s H2D %.1f  D2H %.1f  both %.1f GB/s (aggregate)" % (mib, r["host"], r["h2d_GBps"], r["d2h_GBps"], both_gbps), flush=True)
            out.append(r)
            del h1, h2
        del d1, d2
    res["pcie"] = out

def halloc_section(res):
    import ctypes
    rt = None
    for name in ("libcudart.so", "libcudart.so.13", "libcudart.so.12"):
        try: rt = ctypes.CDLL(name); break
        except OSError: pass
    if rt is None:
        import glob
        c = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "*", "lib", "libcudart.so*"))
        rt = ctypes.CDLL(c[0])
    torch.cuda.init(); torch.zeros(1, device="cuda")
    out = []
    for gib in (1, 4, 16):
        ptr = ctypes.c_void_p()
        t = time.perf_counter(); rc = rt.cudaHostAlloc(ctypes.byref(ptr), ctypes.c_size_t(gib << 30), 0); ta = time.perf_counter() - t
        t = time.perf_counter(); rc2 = rt.cudaFreeHost(ptr); tf = time.perf_counter() - t
        out.append({"gib": gib, "rc": rc, "cudaHostAlloc_s": ta, "s_per_GiB": ta / gib, "cudaFreeHost_s": tf})
        print("cudaHostAlloc %2d GiB: %.3f s (%.3f s/GiB), free %.3f s rc=%d" % (gib, ta, ta / gib, tf, rc), flush=True)
    # torch pin_memory path (caching host allocator: cudaHostAlloc on first use)
    t = time.perf_counter(); x = torch.empty(4 << 30, dtype=torch.uint8, pin_memory=True); tt = time.perf_counter() - t
    out.append({"gib": 4, "torch_empty_pin_memory_s": tt, "s_per_GiB": tt / 4})
    print("torch.empty(pin_memory=True) 4 GiB: %.3f s" % tt)
    res["cudaHostAlloc"] = out

if __name__ == "__main__":
    outp = sys.argv[1]; secs = sys.argv[2:] or ["adam", "procs", "pcie", "halloc"]
    n_total = int(os.environ.get("HR_ELEMS", N_TOTAL))
    res = {"tool": "torch " + torch.__version__, "cpu_count": os.cpu_count()}
    if os.path.exists(outp):
        res = json.load(open(outp))
    for s in secs:
        t = time.perf_counter()
        try:
            {"adam": lambda: adam_section(res, n_total), "procs": lambda: procs_section(res, n_total),
             "pcie": lambda: pcie_section(res), "halloc": lambda: halloc_section(res)}[s]()
        except Exception as e:
            res.setdefault("errors", []).append("%s: %r" % (s, e)); print("ERROR", s, repr(e), flush=True)
        res.setdefault("section_s", {})[s] = time.perf_counter() - t
        json.dump(res, open(outp, "w"), indent=1)
