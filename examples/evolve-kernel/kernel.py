"""A pure-Python matrix multiply whose speed depends on how it loops: the parameters below are
the ones `lessonloop evolve` tunes (see spec.yaml)."""

from operator import mul

# How the product is computed: index every element (naive), walk rows with a scaled row added
# at a time (ikj), or zip each row with the transposed columns (zip).
METHOD = "naive"  # lessonloop: param METHOD choice naive,ikj,zip
# The zip method's columns are taken this many at a time (1 is slow; a few dozen is not).
BLOCK = 1  # lessonloop: param BLOCK int 1..64
# A deliberately wrong shortcut: skip every other term of each sum. About twice as fast, and
# wrong: it must never become the champion.
SLOPPY = False  # lessonloop: param SLOPPY bool


def matmul(a, b):
    """The product of a (n x m) and b (m x p), both lists of lists of floats."""
    n, m, p = len(a), len(b), len(b[0])
    step = 2 if SLOPPY else 1
    if METHOD == "naive":
        c = [[0.0] * p for _ in range(n)]
        for i in range(n):
            for j in range(p):
                total = 0.0
                for k in range(0, m, step):
                    total += a[i][k] * b[k][j]
                c[i][j] = total
        return c
    if METHOD == "ikj":
        c = [[0.0] * p for _ in range(n)]
        for i in range(n):
            row, ai = c[i], a[i]
            for k in range(0, m, step):
                aik, bk = ai[k], b[k]
                for j in range(p):
                    row[j] += aik * bk[j]
        return c
    columns = [col[::step] for col in zip(*b)]
    c = []
    for ai in a:
        ai = ai[::step]
        row = []
        for start in range(0, p, BLOCK):
            row.extend(sum(map(mul, ai, col)) for col in columns[start : start + BLOCK])
        c.append(row)
    return c
