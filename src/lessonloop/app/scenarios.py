"""Scenarios: which can be played, and how given strategies score on chosen seeds."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import FIELD, UsageError

if TYPE_CHECKING:
    from collections.abc import Sequence

MAX_MATCH_TIMEOUT = 3600.0


def list_scenarios() -> list[dict[str, Any]]:
    """Every scenario that can be run (built-ins and installed plugins): name, description,
    strategy schema."""
    from ..scenarios import registry

    items = []
    for name in registry.available_names():
        scenario = registry.load(name)
        items.append(
            {
                "name": name,
                "description": scenario.description,
                "strategy_schema": scenario.strategy_schema,
            }
        )
    return items


def seed_list(seeds: str | list[int]) -> list[int]:
    """Seeds given as ``A..B``, ``A,B,C`` or ``A``, or as a list of integers."""
    from ..loop.scoring import parse_seeds

    if isinstance(seeds, list):
        if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
            raise UsageError("must be A..B, A,B,C or a non-empty list of integers", field="seeds")
        seeds = ",".join(str(s) for s in seeds)
    return parse_seeds(seeds)


def evaluate(
    scenario: str,
    strategies: Sequence[dict[str, Any] | str],
    seeds: str | list[int] = "1..5",
    match_timeout: float = 10.0,
) -> list[dict[str, Any]]:
    """Each strategy scored on the seeds (deterministic per strategy and seed): per-seed
    scores (None for a failed match), mean, dimensions, validity and problems. A strategy given
    as text is parsed as JSON; an unknown scenario fails first, naming the valid ones."""
    from ..loop.scoring import evaluate_strategies
    from ..scenarios import registry

    registry.load(scenario)
    if not (math.isfinite(match_timeout) and 0 < match_timeout <= MAX_MATCH_TIMEOUT):
        raise UsageError(
            f"must be between 0 and {MAX_MATCH_TIMEOUT:g} seconds", field="match_timeout"
        )
    chosen = seed_list(seeds)
    parsed: list[dict[str, Any]] = []
    for strategy in strategies:
        if isinstance(strategy, str):
            strategy = parse_strategy(strategy)
        if not isinstance(strategy, dict):
            raise UsageError("must be a JSON object", field="strategy")
        parsed.append(strategy)
    return evaluate_strategies(scenario, parsed, chosen, match_timeout)


def parse_strategy(text: str) -> dict[str, Any]:
    """A strategy given as JSON text: an object, NaN and Infinity refused."""
    from ..loop.scoring import parse_strategy as parse

    try:
        return parse(text, FIELD)
    except UsageError as exc:  # worded with the field where it stands: each adapter names it
        raise UsageError(exc.message, field="strategy") from None


def strategies_from_file(path: str) -> list[dict[str, Any]]:
    """The strategies of a JSONL file, one JSON object per line (blank lines skipped)."""
    from ..files import read_user_file
    from ..loop.scoring import parse_strategy as parse

    lines = read_user_file(path, "strategies file", encoding="utf-8-sig").splitlines()
    strategies = [
        parse(line, f"{path} line {number}") for number, line in enumerate(lines, 1) if line.strip()
    ]
    if not strategies:
        raise UsageError(f"strategies file {path} holds no strategy")
    return strategies


def failures(report: list[dict[str, Any]]) -> str | None:
    """What failed in an evaluation's matches, in one line; None when every match completed."""
    from ..loop.scoring import failure_line

    return failure_line(report)


def scenario_named(name: str) -> Any:
    """The scenario a user names: a built-in or ``path/file.py:Class``, or the name of a
    plugin scenario the home's runs played (loaded from the reference its newest run stored),
    so ``train orchard`` works as ``promotions --scope orchard`` does."""
    from .. import paths
    from ..scenarios import registry
    from .stores import reading

    text = name.strip().removeprefix("scenario:")
    try:
        return registry.load(text)
    except UsageError:
        with reading(paths.home()) as store:
            row = (
                store.query_one(
                    "SELECT scenario_ref FROM runs WHERE scenario = ? ORDER BY created_at DESC "
                    "LIMIT 1",
                    (text,),
                )
                if store is not None
                else None
            )
        if row is None:
            raise
        return registry.load(row["scenario_ref"])
