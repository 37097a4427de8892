"""Scoring strategies the user gives on seeds the user names: ``evaluate`` and the MCP
``evaluate_strategy`` tool (matches run in worker processes, as in a run)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import UsageError
from ..json_blocks import reject_constant

MAX_SEEDS = 10_000


def parse_seeds(text: str) -> list[int]:
    """``A..B`` (inclusive), ``A,B,C`` or a single ``A``; at most MAX_SEEDS of them."""
    try:
        if ".." in text:
            low, high = (int(part) for part in text.split("..", 1))
            if high < low:
                raise UsageError(f"{text!r}: the end is before the start", field="seeds")
            count = high - low + 1
            seeds: range | list[int] = range(low, high + 1)
        else:
            seeds = [int(part) for part in text.split(",") if part.strip()]
            count = len(seeds)
    except ValueError:
        raise UsageError(f"{text!r}: expected A..B, A,B,C or A (integers)", field="seeds") from None
    if count == 0:
        raise UsageError("is empty", field="seeds")
    if count > MAX_SEEDS:
        raise UsageError(f"covers {count} seeds; at most {MAX_SEEDS} per call", field="seeds")
    chosen = list(seeds)
    if min(chosen) < 0 or max(chosen) >= 2**63:
        raise UsageError("must be non-negative 64-bit integers", field="seeds")
    return chosen


def seed_ranges(seeds: list[int]) -> str:
    """Seeds as ``--seeds`` reads them back, runs of consecutive ones as ``A..B``."""
    parts, start = [], None
    for index, seed in enumerate(seeds):
        if start is None:
            start = seed
        if index + 1 == len(seeds) or seeds[index + 1] != seed + 1:
            parts.append(str(seed) if seed == start else f"{start}..{seed}")
            start = None
    return ",".join(parts)


def failure_line(report: list[dict]) -> str | None:
    """What failed in an evaluation, the same words for text and ``--json``: how many matches,
    every failed seed (per strategy when there are several), that they are left out of the
    mean, and the first failure's reason; None when every match completed."""
    failed = [(i, e) for i, e in enumerate(report, 1) if e.get("failed_seeds")]
    if not failed:
        return None
    count = sum(len(e["failed_seeds"]) for _, e in failed)
    total = sum(len(e["seeds"]) for e in report if e["valid"])
    where = "; ".join(
        (f"strategy {i}: " if len(report) > 1 else "")
        + f"seed{'s' if len(e['failed_seeds']) > 1 else ''} "
        + seed_ranges(e["failed_seeds"])
        for i, e in failed
    )
    return (
        f"{count} of {total} matches failed ({where}), left out of the mean: "
        f"{failed[0][1]['errors'][0]}"
    )


def parse_strategy(text: str, where: str) -> dict:
    """A strategy given as JSON text: an object, with NaN and Infinity refused (``where``
    names it in errors)."""
    try:
        value = json.loads(text, parse_constant=reject_constant)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{where} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:
        raise UsageError(f"{where} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{where} must be a JSON object, got {type(value).__name__}")
    return value


def evaluate_strategies(
    scenario_name: str, strategies: list[dict], seeds: list[int], timeout: float = 10.0
) -> list[dict]:
    """Score each strategy on each seed in worker processes; invalid ones are not played."""
    from ..scenarios import code, registry
    from .pool import MatchPool, mean_dimensions, mean_score

    scenario = registry.load(scenario_name)
    # a validate() that raises or answers no list is the scenario's fault: ScenarioBroken
    checked = [(strategy, code.problems(scenario, strategy)) for strategy in strategies]
    jobs = [(s, seed) for s, problems in checked if not problems for seed in seeds]
    with MatchPool(registry.canonical_reference(scenario_name), timeout=timeout) as pool:
        results = iter(pool.play(jobs) if jobs else [])
    report = []
    for strategy, problems in checked:
        entry: dict[str, Any] = {
            "strategy": strategy,
            "seeds": seeds,
            "scores": [],
            "mean_score": None,
            "dimensions": {},
            "valid": not problems,
            "problems": problems,
        }
        if not problems:
            played = [next(results) for _ in seeds]
            completed = [r for r in played if r.error is None]
            entry["scores"] = [None if r.error else r.score for r in played]
            entry["mean_score"] = mean_score(completed) if completed else None
            entry["dimensions"] = mean_dimensions(played)
            errors = [f"seed {r.seed}: {r.error}" for r in played if r.error]
            if errors:  # left out of mean_score, which is over the completed seeds only
                entry["errors"] = errors
                entry["failed_seeds"] = [r.seed for r in played if r.error]
        report.append(entry)
    return report
