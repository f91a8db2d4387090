#!/usr/bin/env python3
"""golden-diff.py OLD NEW [LABEL] -- which numbers changed between two outputs.

Used by tests/cli/run.sh (UPDATE_GOLDEN=1) and scripts/update-baseline.sh so
that a regenerated golden or baseline says what moved instead of being a bulk
snapshot (issue 13).  Lines are aligned with difflib; a changed line whose
text is the same apart from its numbers is reported number by number:

    LABEL:12: step time 1.234 s -> 1.240 s (+0.49 %)

Any other change is reported as the old and new line.  Numbers are compared
token-wise: a token is an optional sign, digits, an optional fraction and
exponent ("1,024" is two tokens; a thousands separator is text).  Prints
nothing and exits 0 when the files are identical; exits 1 when they differ,
2 on a usage error.
"""
import difflib
import re
import sys

NUM = re.compile(r'[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?')
MAX_LINES = 40  # per file: more than this is summarised


def split(line):
    """(skeleton with numbers replaced by '#', [number strings])"""
    return NUM.sub('#', line), NUM.findall(line)


def unit_after(line, num, start):
    """the word right after a number ('s', 'GiB', '%'), for the report"""
    m = re.match(r'\s?([A-Za-z%/]+)', line[start:])
    return ' ' + m.group(1) if m else ''


def describe(a, b):
    """one string per changed number, or None when the text changed"""
    sa, na = split(a)
    sb, nb = split(b)
    if sa != sb or len(na) != len(nb):
        return None
    out = []
    pos = 0
    for x, y in zip(na, nb):
        at = b.find(y, pos)
        pos = at + len(y) if at >= 0 else pos
        if x == y:
            continue
        u = unit_after(b, y, pos) if at >= 0 else ''
        try:
            fx, fy = float(x), float(y)
            if fx != 0:
                rel = ' (%+.2f %%)' % ((fy - fx) / abs(fx) * 100)
            else:
                rel = ' (from 0)'
        except ValueError:
            rel = ''
        ctx = b[:at].strip() if at >= 0 else ''
        ctx = ('...' + ctx[-30:] if len(ctx) > 30 else ctx) + ' ' if ctx else ''
        out.append('%s%s%s -> %s%s%s' % (ctx, x, u, y, u, rel))
    return out


def diff(old_lines, new_lines, label):
    msgs = []
    sm = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == 'equal':
            continue
        if op == 'replace' and i2 - i1 == j2 - j1:
            for k in range(i2 - i1):
                a, b = old_lines[i1 + k], new_lines[j1 + k]
                d = describe(a, b)
                where = '%s:%d' % (label, j1 + k + 1)
                if d is not None:
                    msgs.append('%s: %s' % (where, '; '.join(d)))
                else:
                    msgs.append('%s: - %s' % (where, a.strip()))
                    msgs.append('%s: + %s' % (where, b.strip()))
            continue
        for k in range(i1, i2):
            msgs.append('%s:%d: - %s' % (label, k + 1, old_lines[k].strip()))
        for k in range(j1, j2):
            msgs.append('%s:%d: + %s' % (label, k + 1, new_lines[k].strip()))
    return msgs


def read(path):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write('usage: golden-diff.py OLD NEW [LABEL]\n')
        return 2
    label = argv[3] if len(argv) == 4 else argv[2]
    msgs = diff(read(argv[1]), read(argv[2]), label)
    if not msgs:
        return 0
    for m in msgs[:MAX_LINES]:
        print(m)
    if len(msgs) > MAX_LINES:
        print('%s: ... and %d more changed lines' % (label, len(msgs) - MAX_LINES))
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
