"""The reference the candidates must agree with, and the inputs they are checked and timed on."""

import random


def matmul(a, b):
    """The textbook product, kept simple so that it is obviously right."""
    return [
        [sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
        for i in range(len(a))
    ]


def inputs(seed, n=8):
    """Two random n x n matrices (the same for a given seed)."""
    rng = random.Random(seed)
    return [[[rng.uniform(-1, 1) for _ in range(n)] for _ in range(n)] for _ in range(2)]
