"""Match seeds: derived from (run seed, generation, attempt, index); the four sets never overlap.

Training seeds lie in [0, 2**31), holdout seeds in [2**31, 2**31 + 2**29), screening seeds in
[2**31 + 2**29, 2**31 + 2**30) and validation seeds in [2**31 + 2**30, 2**32), so no seed the
loop trains on is ever a holdout, screening or validation seed, the gate never judges a
candidate on the seeds it was screened (chosen) on, and it never sees a validation seed. Training and holdout seeds rotate with every
generation and attempt; the validation seeds are one fixed set per run (the same for every
generation, so the run's validated scores are comparable) that is only ever used to report
scores, never to choose. All stay below 2**32, so a scenario may hand them to any seeded generator.
"""

from __future__ import annotations

import hashlib

HALF = 2**31
QUARTER = 2**30
VALIDATION_BASE = HALF + QUARTER
EIGHTH = 2**29
SCREENING_BASE = HALF + EIGHTH


def _draw(*parts: object, modulo: int = HALF) -> int:
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % modulo


def training_seeds(
    run_seed: int, generation: int, attempt: int, count: int, start: int = 0
) -> list[int]:
    """``count`` training seeds from index ``start`` (a close call extends its own list)."""
    return [_draw("train", run_seed, generation, attempt, i) for i in range(start, start + count)]


def holdout_seeds(run_seed: int, generation: int, attempt: int, count: int) -> list[int]:
    return [
        HALF + _draw("holdout", run_seed, generation, attempt, i, modulo=EIGHTH)
        for i in range(count)
    ]


def screening_seeds(run_seed: int, generation: int, attempt: int, count: int) -> list[int]:
    """An attempt's screening seeds: every candidate of its answer and the incumbent play them."""
    return [
        SCREENING_BASE + _draw("screen", run_seed, generation, attempt, i, modulo=EIGHTH)
        for i in range(count)
    ]


def validation_seeds(run_seed: int, count: int) -> list[int]:
    """A run's fixed validation set: the same ``count`` seeds for every generation of the run
    (a set shared by all runs would bias all their scores by that set's luck alike)."""
    return [
        VALIDATION_BASE + _draw("validation", run_seed, i, modulo=QUARTER) for i in range(count)
    ]


def call_seed(run_seed: int, generation: int, attempt: int, role: str) -> int:
    """The seed handed to a provider call, so a redone generation makes the same choices."""
    return _draw("call", run_seed, generation, attempt, role)


def promotion_seeds(key: str, stage: str, count: int, start: int = 0) -> list[int]:
    """Seeds of a promotion trial (``promotion/gate.py``) keyed by what is compared (``key``):
    the screen and confirm stages draw from the training range, the holdout stage from the
    holdout range, each stage its own list, so a candidate is never judged on held-out
    seeds it was screened or confirmed on."""
    if stage == "holdout":
        return [
            HALF + _draw("promote", key, stage, i, modulo=EIGHTH)
            for i in range(start, start + count)
        ]
    return [_draw("promote", key, stage, i) for i in range(start, start + count)]


def trial_game_seeds(trial_seed: int, count: int) -> list[int]:
    """The game seeds a context trial plays each side's proposal on for one trial seed
    (training range: a trial chooses what is served, as training does)."""
    return [_draw("trial-game", trial_seed, i) for i in range(count)]
