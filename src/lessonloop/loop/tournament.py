"""Matches and what they measure: the paired tournament against the incumbent (more pairs on a
close call, then the holdout check), screening several candidates of one answer, and the
validation seeds that rate a strategy (never used to choose). ``Tournament`` is the part of
``loop/runner.Runner`` that plays; every match is a row on record (``match_rows``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..timeutil import utc_now
from . import elo, gate, seeds
from .options import RunOptions
from .pool import MatchPool, MatchResult, mean_dimensions

SCREEN_SEEDS = 3  # screening seeds per candidate (the incumbent plays them once per attempt)
VALIDATION_SEEDS = 50  # fixed validation seeds scoring every advanced strategy (loop/seeds.py)


class Tournament:
    """Playing matches for a run. Needs the run's ``run`` row, ``options``, ``incumbent``, the
    ``ratings`` and ``validated`` scores, and the derived writes to do while matches play."""

    run: Any
    options: RunOptions
    incumbent: dict | None
    ratings: elo.Ratings
    validated: dict[str, float]
    deferred: Any
    write_one: Callable[[], bool]

    def _play(
        self, pool: MatchPool, jobs: list, attempt: int, phase: str, sides: list, match_rows: list
    ) -> list[MatchResult]:
        results = pool.play(jobs, while_waiting=self.write_one if self.deferred else None)
        for side, result in zip(sides, results):
            match_rows.append(
                {
                    "attempt": attempt,
                    "phase": phase,
                    "side": side,
                    "seed": result.seed,
                    "score": result.score,
                    "dimensions": result.dimensions,
                    "summary": result.summary,
                    "error": result.error,
                    "duration_ms": result.duration_ms,
                }
            )
        return results

    def _paired_play(
        self, pool, strategy, incumbent, seed_list, attempt, phase, match_rows
    ) -> tuple[list[MatchResult], list[MatchResult], gate.PairedResult | None]:
        """Both sides on the same seeds; pairs with a failed match on either side are dropped."""
        count = len(seed_list)
        jobs = [(strategy, s) for s in seed_list] + [(incumbent, s) for s in seed_list]
        results = self._play(
            pool, jobs, attempt, phase, ["challenger"] * count + ["incumbent"] * count, match_rows
        )
        mine, theirs = results[:count], results[count:]
        return mine, theirs, paired_result(mine, theirs)

    def _tournament(self, pool, index, attempt, strategy, retries_left, match_rows) -> dict:
        train = seeds.training_seeds(self.run["seed"], index, attempt, self.options.matches)
        paired = holdout = None
        if self.incumbent is None:
            mine = self._play(
                pool,
                [(strategy, s) for s in train],
                attempt,
                "train",
                ["challenger"] * len(train),
                match_rows,
            )
            theirs: list[MatchResult] = []
            if any(r.error is None for r in mine):
                decision = gate.Decision(
                    gate.ADVANCE, "no incumbent yet: the first valid strategy becomes the incumbent"
                )
            else:
                decision = gate.invalid(f"every match failed ({first_error(mine)})", retries_left)
        else:
            incumbent = self.incumbent["strategy"]
            matches, min_delta = self.options.matches, self.options.min_delta
            least = gate.min_pairs(matches)
            mine, theirs, paired = self._paired_play(
                pool, strategy, incumbent, train, attempt, "train", match_rows
            )
            # a close call gets more pairs: doubled, up to gate.TRAIN_CAP x --matches
            while (
                paired is not None
                and paired.close_call(min_delta, least)
                and len(mine) < gate.TRAIN_CAP * matches
            ):
                more = seeds.training_seeds(
                    self.run["seed"], index, attempt, len(mine), start=len(mine)
                )
                extra_mine, extra_theirs, _ = self._paired_play(
                    pool, strategy, incumbent, more, attempt, "train", match_rows
                )
                mine, theirs = mine + extra_mine, theirs + extra_theirs
                paired = paired_result(mine, theirs)
            if paired is None:
                decision = gate.invalid(
                    f"every pair had a failed match ({first_error(mine + theirs)})", retries_left
                )
            else:
                if paired.clears(min_delta, least):
                    held = seeds.holdout_seeds(
                        self.run["seed"], index, attempt, gate.HOLDOUT_CAP * matches
                    )
                    played = gate.HOLDOUT_START * matches
                    held_mine, held_theirs, holdout = self._paired_play(
                        pool, strategy, incumbent, held[:played], attempt, "holdout", match_rows
                    )
                    # a close call on holdout (a gain, not yet significant): pairs doubled
                    while (
                        holdout is not None
                        and not holdout.holds()
                        and holdout.mean_delta > 0
                        and played < len(held)
                    ):
                        more = held[played : 2 * played]
                        extra_mine, extra_theirs, _ = self._paired_play(
                            pool, strategy, incumbent, more, attempt, "holdout", match_rows
                        )
                        held_mine, held_theirs = held_mine + extra_mine, held_theirs + extra_theirs
                        played += len(more)
                        holdout = paired_result(held_mine, held_theirs)
                decision = gate.decide(paired, holdout, min_delta, retries_left, least)
        return {
            "decision": decision,
            "paired": paired,
            "holdout": holdout,
            "challenger": mine,
            "incumbent": theirs,
            "challenger_dims": mean_dimensions(mine),
            "incumbent_dims": mean_dimensions(theirs),
        }

    def _screen(self, pool, index, attempt, candidates, match_rows) -> tuple[dict, list[dict]]:
        """Play each candidate once on the attempt's screening seeds, beside the incumbent on
        the same seeds (each seed's luck, shared by every strategy, cancels in the paired
        delta); the best by mean paired delta goes to the gate. Screening chooses which
        candidate is judged, never whether it advances: the gate judges it on training and
        holdout seeds of its own. Returns that candidate and a row per screened candidate."""
        seed_list = seeds.screening_seeds(self.run["seed"], index, attempt, SCREEN_SEEDS)
        per_candidate = len(seed_list)
        jobs = [(c, s) for c in candidates for s in seed_list]
        sides = [f"candidate:{i}" for i in range(len(candidates)) for _ in seed_list]
        if self.incumbent is not None:
            jobs += [(self.incumbent["strategy"], s) for s in seed_list]
            sides += ["incumbent"] * per_candidate
        results = self._play(pool, jobs, attempt, "screen", sides, match_rows)
        reference = (
            results[len(candidates) * per_candidate :] if self.incumbent is not None else None
        )
        measured: list[tuple[float | None, int]] = []
        for position in range(len(candidates)):
            mine = results[position * per_candidate : (position + 1) * per_candidate]
            if reference is None:  # no incumbent yet: raw scores, made relative below
                deltas = [a.score for a in mine if a.error is None]
            else:
                deltas = [
                    a.score - b.score
                    for a, b in zip(mine, reference)
                    if a.error is None and b.error is None
                ]
            measured.append((sum(deltas) / len(deltas), len(deltas)) if deltas else (None, 0))
        ranked = {i: delta for i, (delta, _) in enumerate(measured) if delta is not None}
        best = max(ranked, key=ranked.__getitem__) if ranked else 0  # the first of the best
        if reference is None and ranked:  # relative to the one the gate makes the incumbent
            top = ranked[best]
            measured = [(d - top if d is not None else None, n) for d, n in measured]
        rows = [
            {
                "attempt": attempt,
                "candidate": i,
                "strategy": c,
                "mean_delta": measured[i][0],
                "pairs": measured[i][1],
                "chosen": i == best,
            }
            for i, c in enumerate(candidates)
        ]
        return candidates[best], rows

    def _decision_row(self, attempt, decision, paired=None, holdout=None) -> dict:
        """A gate decision with the statistic it decided on."""
        return {
            "attempt": attempt,
            "decision": decision.decision,
            "rationale": decision.rationale,
            "reason": decision.reason,
            "mean_delta": paired.mean_delta if paired else None,
            "wins": paired.wins if paired else 0,
            "losses": paired.losses if paired else 0,
            "holdout_delta": holdout.mean_delta if holdout else None,
            "pairs": paired.pairs if paired else None,
            "t_statistic": paired.t_statistic(self.options.min_delta) if paired else None,
            "lower_bound": paired.lower_bound if paired else None,
            "holdout_pairs": holdout.pairs if holdout else None,
            "holdout_lower_bound": holdout.lower_bound if holdout else None,
            "created_at": utc_now(),
        }

    def _rate(self, key: str, scores: list) -> float:
        """Rate a strategy from its validation scores; its validated score (the mean over the
        seeds that completed, 0 when none did)."""
        self.ratings.add(key, scores)
        completed = [x for x in scores if x is not None]
        self.validated[key] = sum(completed) / len(completed) if completed else 0.0
        return self.validated[key]

    def _validate(
        self, pool, key: str, strategy: dict, side: str, attempt: int, match_rows: list
    ) -> None:
        """Play a strategy on the fixed validation seeds (never used to choose) and rate it."""
        valid = seeds.validation_seeds(self.run["seed"], VALIDATION_SEEDS)
        results = self._play(
            pool,
            [(strategy, s) for s in valid],
            attempt,
            "validation",
            [side] * len(valid),
            match_rows,
        )
        self._rate(key, [None if r.error else r.score for r in results])


def screened_entry(row: dict) -> dict:
    """A screened candidate as the search history shows it (decision ``screened``)."""
    return {
        "strategy": row["strategy"],
        "mean_delta": row["mean_delta"],
        "pairs": row["pairs"],
        "decision": "screened",
    }


def paired_result(mine: list[MatchResult], theirs: list[MatchResult]) -> gate.PairedResult | None:
    """The paired result of two sides on the same seeds; pairs with a failed match are left out."""
    pairs = [
        (a.score, b.score) for a, b in zip(mine, theirs) if a.error is None and b.error is None
    ]
    return gate.PairedResult.from_pairs(pairs) if pairs else None


def first_error(results: list[MatchResult]) -> str:
    return next((r.error for r in results if r.error), "no error recorded")
