"""``scenarios`` and ``evaluate``: what can be played, and how a given strategy scores."""

from __future__ import annotations

import json
import math
import sys
from typing import Optional

import typer

from ..errors import EXIT_FAILURE, EXIT_USAGE, UsageError
from ..files import read_user_file
from ..loop.scoring import evaluate_strategies, failure_line, parse_seeds, parse_strategy
from .output import error_line, print_json


def _read_strategies(path: str) -> list[dict]:
    lines = read_user_file(path, "strategies file", encoding="utf-8-sig").splitlines()
    strategies = [parse_strategy(line, f"{path} line {number}")
                  for number, line in enumerate(lines, 1) if line.strip()]
    if not strategies:
        raise UsageError(f"strategies file {path} holds no strategy")
    return strategies


def register(app: typer.Typer) -> None:
    @app.command()
    def scenarios(
        as_json: bool = typer.Option(False, "--json", help="Print name, description and strategy schema."),
    ) -> None:
        """List the scenarios you can run (built-ins and installed plugins)."""
        from ..scenarios import registry

        items = []
        for name in registry.available_names():
            scenario = registry.load(name)
            items.append({"name": name, "description": scenario.description,
                          "strategy_schema": scenario.strategy_schema})
        if as_json:
            print_json(items)
            return
        for item in items:
            params = ", ".join(item["strategy_schema"].get("properties", {}))
            summary = item["description"].strip().split(". ")[0].rstrip(".")
            sys.stdout.write(f"{item['name']:<14} {summary}.\n{'':<14} parameters: {params}\n")

    @app.command()
    def evaluate(
        scenario: str = typer.Argument(..., help="Scenario name or path/file.py:ClassName."),
        strategy: Optional[str] = typer.Option(None, "--strategy", help="One strategy as a JSON object."),
        strategies: Optional[str] = typer.Option(None, "--strategies", help="A JSONL file, one strategy per line."),
        seeds: str = typer.Option("1..5", "--seeds", help="Seeds: A..B (inclusive), A,B,C or A."),
        match_timeout: float = typer.Option(10.0, "--match-timeout", help="Seconds before a match is killed."),
        as_json: bool = typer.Option(False, "--json", help="Print results as JSON."),
    ) -> None:
        """Score strategies on chosen seeds: per-seed scores, mean and dimensions."""
        if (strategy is None) == (strategies is None):
            raise UsageError("give exactly one of --strategy JSON or --strategies FILE.jsonl")
        if not (math.isfinite(match_timeout) and 0 < match_timeout <= 3600):
            raise UsageError("--match-timeout must be between 0 and 3600 seconds")
        seed_list = parse_seeds(seeds)
        items = [parse_strategy(strategy, "--strategy")] if strategy is not None else _read_strategies(strategies)
        report = evaluate_strategies(scenario, items, seed_list, match_timeout)
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
                over = (f"{len(seed_list) - failed} of {len(seed_list)} seeds ({failed} failed)"
                        if failed else f"{len(seed_list)} seeds")
                sys.stdout.write(f"{head}\n  mean {mean} over {over}  [{dims}]\n"
                                 f"  scores: {scores}\n")
                for error in entry.get("errors", []):
                    sys.stdout.write(f"  failed: {error}\n")
        invalid = [e for e in report if not e["valid"]]
        if invalid:
            error_line(f"{len(invalid)} of {len(report)} strategies failed validation: "
                       f"{'; '.join(invalid[0]['problems'])}", as_json)
            raise typer.Exit(EXIT_USAGE)
        failed = failure_line(report)
        if failed:
            error_line(failed, as_json)
            raise typer.Exit(EXIT_FAILURE)
