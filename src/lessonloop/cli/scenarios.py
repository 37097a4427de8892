"""``scenarios`` and ``evaluate``: what can be played, and how a given strategy scores."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from ..errors import EXIT_FAILURE, EXIT_USAGE, UsageError
from .output import error_line, print_json

if TYPE_CHECKING:  # Typer is imported by register() only: the fast path needs none
    import typer


def _read_strategies(path: str) -> list[dict]:
    from ..files import read_user_file
    from ..loop.scoring import parse_strategy

    lines = read_user_file(path, "strategies file", encoding="utf-8-sig").splitlines()
    strategies = [
        parse_strategy(line, f"{path} line {number}")
        for number, line in enumerate(lines, 1)
        if line.strip()
    ]
    if not strategies:
        raise UsageError(f"strategies file {path} holds no strategy")
    return strategies


def scenarios_command(as_json: bool = False) -> None:
    """``scenarios``: the built-ins and installed plugins, with their strategy schemas."""
    from ..app.scenarios import list_scenarios

    items = list_scenarios()
    if as_json:
        print_json(items)
        return
    for item in items:
        params = ", ".join(item["strategy_schema"].get("properties", {}))
        summary = item["description"].strip().split(". ")[0].rstrip(".")
        sys.stdout.write(f"{item['name']:<14} {summary}.\n{'':<14} parameters: {params}\n")


def register(app: typer.Typer) -> None:
    import typer

    @app.command()
    def scenarios(
        as_json: bool = typer.Option(
            False, "--json", help="Print name, description and strategy schema."
        ),
    ) -> None:
        """List the scenarios you can run (built-ins and installed plugins)."""
        scenarios_command(as_json)

    @app.command()
    def evaluate(
        scenario: str = typer.Argument(..., help="Scenario name or path/file.py:ClassName."),
        strategy: str | None = typer.Option(
            None, "--strategy", help="One strategy as a JSON object."
        ),
        strategies: str | None = typer.Option(
            None, "--strategies", help="A JSONL file, one strategy per line."
        ),
        seeds: str = typer.Option("1..5", "--seeds", help="Seeds: A..B (inclusive), A,B,C or A."),
        match_timeout: float = typer.Option(
            10.0, "--match-timeout", help="Seconds before a match is killed."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print results as JSON."),
    ) -> None:
        """Score strategies on chosen seeds: per-seed scores, mean and dimensions."""
        # here, not at the top: `scenarios` (fast.py) needs none of it
        from ..app.scenarios import evaluate as evaluate_on_seeds
        from ..loop.scoring import failure_line, parse_strategy

        if (strategy is None) == (strategies is None):
            raise UsageError("give exactly one of --strategy JSON or --strategies FILE.jsonl")
        items = (
            [parse_strategy(strategy, "--strategy")]
            if strategy is not None
            else _read_strategies(strategies)
        )
        report = evaluate_on_seeds(scenario, items, seeds, match_timeout)
        if as_json:
            print_json(report if strategies is not None else report[0])
        else:
            for entry in report:
                head = json.dumps(entry["strategy"], sort_keys=True)
                if not entry["valid"]:
                    sys.stdout.write(f"{head}\n  invalid: {'; '.join(entry['problems'])}\n")
                    continue
                dims = ", ".join(f"{k} {v:.4f}" for k, v in entry["dimensions"].items())
                scores = " ".join("failed" if s is None else f"{s:.4f}" for s in entry["scores"])
                mean = "n/a" if entry["mean_score"] is None else f"{entry['mean_score']:.4f}"
                failed = len(entry.get("failed_seeds", []))
                played = len(entry["seeds"])
                over = (
                    f"{played - failed} of {played} seeds ({failed} failed)"
                    if failed
                    else f"{played} seeds"
                )
                sys.stdout.write(
                    f"{head}\n  mean {mean} over {over}  [{dims}]\n  scores: {scores}\n"
                )
                for error in entry.get("errors", []):
                    sys.stdout.write(f"  failed: {error}\n")
        invalid = [e for e in report if not e["valid"]]
        if invalid:
            error_line(
                f"{len(invalid)} of {len(report)} strategies failed validation: "
                f"{'; '.join(invalid[0]['problems'])}",
                as_json,
            )
            raise typer.Exit(EXIT_USAGE)
        failed = failure_line(report)
        if failed:
            error_line(failed, as_json)
            raise typer.Exit(EXIT_FAILURE)
