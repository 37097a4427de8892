"""Match seeds: derived from (run seed, generation, attempt, index); holdout never overlaps.

Training seeds lie in [0, 2**31) and holdout seeds in [2**31, 2**32), so no seed the loop
trains on is ever a holdout seed; both rotate with every generation and attempt.
"""

from __future__ import annotations

import hashlib

HALF = 2**31


def _draw(*parts: object) -> int:
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % HALF


def training_seeds(run_seed: int, generation: int, attempt: int, count: int) -> list[int]:
    return [_draw("train", run_seed, generation, attempt, i) for i in range(count)]


def holdout_seeds(run_seed: int, generation: int, attempt: int, count: int) -> list[int]:
    return [HALF + _draw("holdout", run_seed, generation, attempt, i) for i in range(count)]


def call_seed(run_seed: int, generation: int, attempt: int, role: str) -> int:
    """The seed handed to a provider call, so a redone generation makes the same choices."""
    return _draw("call", run_seed, generation, attempt, role)
