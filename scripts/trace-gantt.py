#!/usr/bin/env python3
"""trace-gantt.py — draws a window of a zsim Chrome trace (zsim simulate
--trace FILE) as a Gantt chart with gnuplot: one row per queue, one box per
task, coloured by the task's class.  Used for docs/nvme.md.

usage: scripts/trace-gantt.py TRACE.json OUT.png [--from-task NAME] [--last]
  --from-task NAME   the window starts at the first (or with --last, the
                     last step's first) task whose name starts with NAME and
                     ends at the end of the trace
Writes OUT.png; needs gnuplot (pngcairo) on PATH.
"""
import json
import subprocess
import sys

COLOURS = {"compute": "#4477aa", "collective": "#66ccee", "pcie": "#228833",
           "optimizer": "#ccbb44", "host": "#bbbbbb", "memory": "#dddddd",
           "sync": "#eeeeee", "copy": "#aa3377", "nvme": "#ee6677"}


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    trace, out = argv[1], argv[2]
    start_name = None
    last = "--last" in argv
    if "--from-task" in argv:
        start_name = argv[argv.index("--from-task") + 1]
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    names = {}
    spans = []
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and \
                e.get("pid") == 1:
            names[e["tid"]] = e["args"]["name"]
        elif e.get("ph") == "X" and e.get("pid") == 1:
            spans.append(e)
    t_end = max(e["ts"] + e["dur"] for e in spans)
    t0 = min(e["ts"] for e in spans)
    if start_name:
        starts = sorted(e["ts"] for e in spans
                        if e["name"].startswith(start_name))
        if not starts:
            sys.stderr.write("trace-gantt: no task named %s\n" % start_name)
            return 3
        # the last step: the NVMe swaps come in one block per step, so its
        # first task is the first after the biggest gap between starts
        if last and len(starts) > 1:
            gaps = [(starts[i + 1] - starts[i], i + 1)
                    for i in range(len(starts) - 1)]
            t0 = starts[max(gaps)[1]]
        else:
            t0 = starts[0]
    rows = sorted({e["tid"] for e in spans
                   if e["ts"] + e["dur"] > t0 and e["dur"] > 0})
    ypos = {tid: i for i, tid in enumerate(rows)}
    gp = ["set terminal pngcairo size 1400,%d font ',11'" % (120 + 60 * len(rows)),
          "set output '%s'" % out,
          "set xlabel 'time in the step (s)'",
          "set xrange [0:%g]" % ((t_end - t0) / 1e6),
          "set yrange [-0.6:%g]" % (len(rows) - 0.4),
          "set ytics (%s)" % ", ".join("'%s' %d" % (names.get(t, t), i)
                                       for t, i in ypos.items()),
          "set grid xtics", "unset key", "set tmargin 3"]
    n = 0
    for e in spans:
        s, d = e["ts"], e["dur"]
        if s + d <= t0 or d <= 0 or e["tid"] not in ypos:
            continue
        x0 = max(s, t0) - t0
        y = ypos[e["tid"]]
        n += 1
        gp.append("set object %d rect from %g,%g to %g,%g fc rgb '%s' "
                  "fs solid 0.9 %s" %
                  (n, x0 / 1e6, y - 0.35, (s + d - t0) / 1e6, y + 0.35,
                   COLOURS.get(e.get("cat"), "#999999"),
                   "border lc rgb '#333333'" if d > 50000 else "noborder"))
    labels = [(c, COLOURS[c]) for c in ("nvme", "optimizer", "pcie", "compute")]
    for i, (c, col) in enumerate(labels):
        gp.append("set label %d '%s' at graph %g, graph 1.04 tc rgb '%s'" %
                  (i + 1, c, 0.02 + 0.1 * i, col))
    gp.append("plot NaN notitle")
    subprocess.run(["gnuplot"], input="\n".join(gp) + "\n", text=True,
                   check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
