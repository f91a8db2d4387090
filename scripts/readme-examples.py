#!/usr/bin/env python3
"""readme-examples.py — re-run every `$ ./zsim ...` (or `$ zsim ...`) example in
README.md (and docs/*.md given as arguments) and replace its printed output with what the
current binary prints, so the README shows real output.

  scripts/readme-examples.py [FILE.md ...]      (default: README.md)
  ZSIM_README_ONLY=REGEX scripts/readme-examples.py   re-run only the blocks
      with a command matching REGEX (Python re.search), e.g. 'validate|calibrate'
      after a merge that moves the accuracy figures but not the bench ones

A command's output is the lines after it up to the next `$ ` line or the end
of the fenced block.  Where the README trims an output with a line `...`, the
same number of leading (and trailing) lines are kept from the new output
around the `...`.  Commands run with bash from a scratch directory that links
to the repository's top-level entries, so files they write (ds_config.json,
reports) do not land in the tree; `./zsim` is the repository's wrapper.
Review `git diff` before committing.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scratch():
    d = tempfile.mkdtemp(prefix="zsim-readme-")
    for e in os.listdir(ROOT):
        if e.startswith("."):
            continue
        os.symlink(os.path.join(ROOT, e), os.path.join(d, e))
    return d


MARK = "@@zsim-readme-example@@"


def run_block(cmds, cwd):
    """Runs a block's commands in one bash session (so `echo $?`, files and
    directories carry from one to the next); returns each one's output."""
    env = dict(os.environ)
    env.pop("ZSIM_GOLDEN", None)
    # each command sees the exit status of the one before it (echo $?)
    script = f'zsim() {{ "{ROOT}/zsim" "$@"; }}\n__rc=0\n' + "".join(
        f"echo {MARK}\n(exit $__rc)\n{c} 2>&1\n__rc=$?\n" for c in cmds)
    p = subprocess.run(["bash", "-c", script], cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    parts = p.stdout.split(MARK + "\n")[1:]
    outs = []
    for part in parts:
        part = part.rstrip("\n")
        outs.append(part.split("\n") if part else [])
    while len(outs) < len(cmds):
        outs.append([])
    return outs


def trimmed(old, new):
    """The new output, trimmed where the old one was: the old head's length,
    `...`, then from the line that starts like the old tail's first
    non-blank line (its first 24 characters) to the end."""
    if "..." not in [l.strip() for l in old]:
        return new
    i = [l.strip() for l in old].index("...")
    head, tail = i, len(old) - i - 1
    if head + tail >= len(new):
        return new
    if not tail:
        return new[:head] + [old[i]]
    k = i + 1
    while k < len(old) and not old[k].strip():
        k += 1
    if k < len(old):
        key = old[k][:24]
        for j in range(head, len(new)):
            if new[j][:24] == key:
                return new[:head] + [old[i]] + new[j - (k - i - 1):]
    return new[:head] + [old[i]] + new[len(new) - tail:]


def process(path, cwd):
    lines = open(path).read().split("\n")
    out, i, n_cmds = [], 0, 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            out.append(lines[i])
            i += 1
            continue
        # a fenced block: lines[i] .. lines[end]
        end = i + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        body = lines[i + 1:end]
        starts = [k for k, l in enumerate(body) if l.startswith("$ ")]
        only = os.environ.get("ZSIM_README_ONLY")
        if not any("zsim" in body[k] for k in starts) or (
                only and not any(re.search(only, body[k]) for k in starts)):
            out.extend(lines[i:end + 1])
            i = end + 1
            continue
        # a command ending in a backslash continues on the next lines, which
        # are part of the command, not of its output
        ncont = []
        for k in starts:
            c = 0
            while body[k + c].endswith("\\") and k + c + 1 < len(body):
                c += 1
            ncont.append(c)
        cmds = ["\n".join(body[k:k + c + 1])[2:]
                for k, c in zip(starts, ncont)]
        outs = run_block(cmds, cwd)
        out.append(lines[i])
        out.extend(body[:starts[0]])
        for n, k in enumerate(starts):
            nxt = starts[n + 1] if n + 1 < len(starts) else len(body)
            out.extend(body[k:k + ncont[n] + 1])
            out.extend(trimmed(body[k + ncont[n] + 1:nxt], outs[n]))
        n_cmds += len(cmds)
        if end < len(lines):
            out.append(lines[end])
        i = end + 1
    open(path, "w").write("\n".join(out))
    print(f"{path}: {n_cmds} example command(s) re-run", file=sys.stderr)


def main():
    files = sys.argv[1:] or [os.path.join(ROOT, "README.md")]
    cwd = scratch()
    for f in files:
        process(f, cwd)


if __name__ == "__main__":
    main()
