"""``scenarios`` and ``evaluate``: what can be played, and how given strategies score (the
use cases in ``app/scenarios.py``). ``fast.py`` calls ``scenarios_command`` without Typer."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

from ..errors import EXIT_FAILURE, EXIT_USAGE, UsageError
from .output import error_line, print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer


def scenarios_command(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print name, description and strategy schema.")
    ] = False,
) -> None:
    """List the scenarios you can run (built-ins and installed plugins)."""
    from ..app.scenarios import list_scenarios

    items = list_scenarios()
    if as_json:
        print_json(items)
        return
    for item in items:
        params = ", ".join(item["strategy_schema"].get("properties", {}))
        summary = item["description"].strip().split(". ")[0].rstrip(".")
        sys.stdout.write(f"{item['name']:<14} {summary}.\n{'':<14} parameters: {params}\n")


def evaluate_command(
    scenario: Annotated[str, typer.Argument(help="Scenario name or path/file.py:ClassName.")],
    strategy: Annotated[
        str | None, typer.Option("--strategy", help="One strategy as a JSON object.")
    ] = None,
    strategies: Annotated[
        str | None, typer.Option("--strategies", help="A JSONL file, one strategy per line.")
    ] = None,
    seeds: Annotated[
        str, typer.Option("--seeds", help="Seeds: A..B (inclusive), A,B,C or A.")
    ] = "1..5",
    match_timeout: Annotated[
        float, typer.Option("--match-timeout", help="Seconds before a match is killed.")
    ] = 10.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print results as JSON.")] = False,
) -> int:
    """Score strategies on chosen seeds: per-seed scores, mean and dimensions."""
    from ..app.scenarios import evaluate, failures, parse_strategy, strategies_from_file

    if strategy is not None and strategies is None:
        items = [parse_strategy(strategy)]
    elif strategies is not None and strategy is None:
        items = strategies_from_file(strategies)
    else:
        raise UsageError("give exactly one of --strategy JSON or --strategies FILE.jsonl")
    report = evaluate(scenario, items, seeds, match_timeout)
    if as_json:
        print_json(report if strategies is not None else report[0])
    else:
        sys.stdout.write("".join(_report_lines(entry) for entry in report))
    invalid = [entry for entry in report if not entry["valid"]]
    if invalid:
        error_line(
            f"{len(invalid)} of {len(report)} strategies failed validation: "
            f"{'; '.join(invalid[0]['problems'])}",
            as_json,
        )
        return EXIT_USAGE
    failed = failures(report)
    if failed:
        error_line(failed, as_json)
        return EXIT_FAILURE
    return 0


def _report_lines(entry: dict) -> str:
    """One strategy's result: its scores over the seeds, or why it is not valid."""
    head = json.dumps(entry["strategy"], sort_keys=True)
    if not entry["valid"]:
        return f"{head}\n  invalid: {'; '.join(entry['problems'])}\n"
    dims = ", ".join(f"{name} {value:.4f}" for name, value in entry["dimensions"].items())
    scores = " ".join("failed" if score is None else f"{score:.4f}" for score in entry["scores"])
    mean = "n/a" if entry["mean_score"] is None else f"{entry['mean_score']:.4f}"
    failed = len(entry.get("failed_seeds", []))
    played = len(entry["seeds"])
    over = f"{played - failed} of {played} seeds ({failed} failed)" if failed else f"{played} seeds"
    text = f"{head}\n  mean {mean} over {over}  [{dims}]\n  scores: {scores}\n"
    return text + "".join(f"  failed: {error}\n" for error in entry.get("errors", []))
