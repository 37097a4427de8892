"""Compare runs: their settings side by side, their curves, and their best strategies played
again on the same fresh seeds, with the paired difference and its 95 % confidence interval.

Why re-score rather than compare the runs' own numbers: each run's validated score is its
mean on its own validation seeds, so two runs' scores differ by those seeds' luck as well as
by their strategies. Played on one shared set of seeds, the per-seed differences cancel that
luck (a paired comparison). The seeds are drawn from the validation range (no run ever trains
on or chooses with a seed there) and any seed a compared run already played is skipped.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from ..report.data import RunReport
    from ..store.db import Store

DEFAULT_MATCHES = 30
MAX_MATCHES = 2000
MAX_RUNS = 6  # the curves stay readable, and each run adds its matches
VALIDATION_BASE = 2**31 + 2**30  # as loop/seeds.py: [VALIDATION_BASE, 2**32) is never trained on
VALIDATION_SPAN = 2**30


def fresh_seeds(count: int, salt: int, played: set[int]) -> list[int]:
    """``count`` seeds in the validation range, drawn from ``salt`` (the same salt, the same
    seeds), none of them in ``played``."""
    seeds: list[int] = []
    index = 0
    while len(seeds) < count:
        digest = hashlib.blake2b(f"compare:{salt}:{index}".encode(), digest_size=8).digest()
        seed = VALIDATION_BASE + int.from_bytes(digest, "big") % VALIDATION_SPAN
        index += 1
        if seed not in played and seed not in seeds:
            seeds.append(seed)
    return seeds


def check_request(run_ids: list[str], matches: int) -> list[str]:
    """The run ids, each once, or a UsageError naming what is wrong."""
    unique = list(dict.fromkeys(run_ids))
    if len(unique) != len(run_ids):
        raise UsageError("compare names a run twice: give each run once")
    if len(unique) < 2:
        raise UsageError("compare needs at least two run ids")
    if len(unique) > MAX_RUNS:
        raise UsageError(f"compare takes at most {MAX_RUNS} runs at once")
    if not 2 <= matches <= MAX_MATCHES:
        raise UsageError(f"must be between 2 and {MAX_MATCHES}", field="matches")
    return unique


def _summary(report: RunReport) -> dict[str, Any]:
    usage = report.usage["totals"]
    best = report.best
    return {
        "run_id": report.run["run_id"],
        "scenario": report.run["scenario"],
        "kind": report.run["kind"],
        "status": report.run["status"],
        "generations": len(report.generations),
        "target_generations": report.run["target_generations"],
        "best_generation": best["generation"] if best else None,
        "best_score": (best["validated"] if report.validated else best["tournament"])
        if best
        else None,
        "best_tournament": best["tournament"] if best else None,
        "best_strategy": best["strategy"] if best else None,
        "best_carried_from": best["carried_from"] if best else None,
        "validated": report.validated,
        "plays": report.usage["plays_total"],
        "calls": usage["calls"],
        "tokens": usage["input_tokens"] + usage["output_tokens"],
        "cost": usage["cost"],
        "curve": [
            {
                "generation": row["generation"],
                "score": row["validated"] if report.validated else row["best"],
                "tournament": row["tournament"],
                "decision": row["decision"],
            }
            for row in report.generations
        ],
    }


def _settings(reports: list[RunReport]) -> list[dict[str, Any]]:
    """Every setting of every run, one row per key, marked where the runs differ."""
    columns = [
        {
            "scenario": r.run["scenario"],
            "kind": r.run["kind"],
            "provider": r.run["provider"],
            "seed": r.run["seed"],
            "target_generations": r.run["target_generations"],
            **r.settings,
        }
        for r in reports
    ]
    keys = list(dict.fromkeys(key for column in columns for key in column))
    return [
        {
            "key": key,
            "values": [column.get(key) for column in columns],
            "differs": len({repr(column.get(key)) for column in columns}) > 1,
        }
        for key in keys
    ]


def _why_not_rescored(reports: list[RunReport]) -> str | None:
    if any(r.details is not None for r in reports):
        return (
            "evolve runs and missions are not re-scored: a candidate is measured by its "
            "benchmark and a step by its verifier (their best scores are shown as recorded)"
        )
    if any(r.is_task for r in reports):
        return (
            "task runs are not re-scored: an output is scored by its verifier or judge, not "
            "on seeds (their best scores are shown as recorded)"
        )
    if len({r.run["scenario_ref"] for r in reports}) > 1:
        return "the runs play different scenarios: their strategies cannot share seeds"
    missing = [r.run["run_id"] for r in reports if r.best is None]
    if missing:
        return f"no strategy has advanced yet in {', '.join(missing)}"
    return None


def _rescore(
    store: Store, reports: list[RunReport], matches: int, salt: int, timeout: float | None
) -> dict[str, Any]:
    from ..report.stats import paired, sentence
    from .scenarios import evaluate

    run_ids = [r.run["run_id"] for r in reports]
    marks = ",".join("?" * len(run_ids))
    played = {
        row[0]
        for row in store.query(
            f"SELECT DISTINCT seed FROM matches WHERE run_id IN ({marks})", run_ids
        )
    }
    seeds = fresh_seeds(matches, salt, played)
    if timeout is None:
        timeout = max(float(r.settings.get("match_timeout", 10.0)) for r in reports)
    # every run has a best strategy here (``_why_not_rescored``)
    strategies = [r.best["strategy"] for r in reports if r.best is not None]
    results = evaluate(reports[0].run["scenario_ref"], strategies, seeds, timeout)
    baseline = results[0]["scores"]
    comparisons = []
    for report, strategy, result in zip(reports[1:], strategies[1:], results[1:]):
        outcome = paired(baseline, result["scores"])
        same = strategy == strategies[0]
        comparisons.append(
            {
                "baseline": run_ids[0],
                "run_id": report.run["run_id"],
                **outcome.to_dict(),
                "same_strategy": same,
                "sentence": (
                    f"{report.run['run_id']} and {run_ids[0]} have the same best strategy: "
                    "no difference to test."
                    if same
                    else sentence(outcome, run_ids[0], report.run["run_id"])
                ),
            }
        )
    return {
        "seeds": seeds,
        "salt": salt,
        "matches_played": len(seeds) * len(reports),
        "runs": [
            {
                "run_id": run_id,
                "mean_score": result["mean_score"],
                "scores": result["scores"],
                "failed_seeds": result.get("failed_seeds", []),
            }
            for run_id, result in zip(run_ids, results)
        ],
        "comparisons": comparisons,
        "method": "paired Student t on the per-seed differences (later run minus the first), "
        "two-sided 95 % interval",
    }


def compare(
    run_ids: list[str],
    matches: int = DEFAULT_MATCHES,
    salt: int = 0,
    match_timeout: float | None = None,
) -> dict[str, Any]:
    """The comparison document: settings (what differs), each run's summary and curve, and
    the best strategies re-scored on ``matches`` fresh seeds shared by all (each later run
    compared with the first); ``verdict`` says in words which run is better, or that the
    difference is not significant."""
    from ..report.data import collect
    from .stores import reading

    run_ids = check_request(run_ids, matches)
    with reading(paths.home()) as store:
        if store is None:
            raise NotFoundError(f"unknown run id {run_ids[0]!r} (no lessonloop database here yet)")
        reports = [collect(store, run_id) for run_id in run_ids]
        reason = _why_not_rescored(reports)
        rescored = None if reason else _rescore(store, reports, matches, salt, match_timeout)
    if rescored is not None:
        verdict = " ".join(c["sentence"] for c in rescored["comparisons"])
    else:
        verdict = f"Not re-scored: {reason}."
    return {
        "runs": [_summary(r) for r in reports],
        "settings": _settings(reports),
        "rescore": rescored,
        "not_rescored": reason,
        "verdict": verdict,
    }


def write_compare_html(document: dict[str, Any], path: str | Path) -> Path:
    """Write the comparison as one self-contained HTML page at ``path`` (never through a
    symlink, directory or device the user may not have meant)."""
    import os
    import stat

    from ..files import atomic_write
    from ..report.compare_page import compare_page

    target = Path(path)
    if not str(path):
        raise UsageError("needs a file name", field="html")
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}", field="html") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise UsageError(f"refusing to write {target}: it exists and is not a regular file")
    atomic_write(target, compare_page(document))
    return target
