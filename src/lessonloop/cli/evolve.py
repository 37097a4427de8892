"""``evolve``: benchmark-gated evolution of a source file (the use case in ``app/evolve.py``;
here, the flags and what is printed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from .output import print_json


def _speed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def generation_printer(as_json: bool):
    """A line per generation: params, correct?, the gain (a speed-up only for time) with its
    bound, champion? (none with --json)."""
    from ..app.evolve import amount, bound_label, gain_label

    def show(event: dict) -> None:
        if as_json:
            return
        metric = event["metric"]
        name = gain_label(metric, event["direction"])
        correct = {None: "not checked", True: "correct", False: "WRONG"}[event["correct"]]
        line = f"gen {event['generation']}: {json.dumps(event['params'])}  {correct}"
        if event["speedup"] is not None:
            stats = event["stats"]
            noise = stats["candidate_noise"]
            line += (
                f"  {name} {_speed(event['speedup'])} vs gen {event['against']} "
                f"(>= {_speed(event['speedup_lower_bound'])} {bound_label(stats)}, "
                f"{stats['pairs']} pairs; min {amount(noise['min'], metric)}, median "
                f"{amount(noise['median'], metric)}, spread {noise['spread']:.1%})"
            )
            recheck = stats.get("recheck")
            if recheck is not None:
                line += (
                    f"  recheck {_speed(recheck['speedup'])} (>= "
                    f"{_speed(recheck['speedup_lower_bound'])}, {recheck['pairs']} fresh pairs)"
                )
        line += "  CHAMPION" if event["champion"] else f"  ({event['status']})"
        if event["message"] and (event["correct"] is not True or not event["speedup"]):
            line += f" — {event['message']}"
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    return show


def evolve(
    spec: Path = typer.Argument(..., help="An evolve spec (YAML or JSON)."),
    generations: int | None = typer.Option(
        None, "--generations", help="Candidates to try (default: the spec's budget)."
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="Seed of the proposer (default 0; a run continued keeps its own)."
    ),
    run_id: str | None = typer.Option(
        None, "--run-id", help="Name the run; an existing id continues it."
    ),
    provider: str | None = typer.Option(
        None,
        "--provider",
        help="A model route writes each candidate source (default: config, then "
        "$LESSONLOOP_PROVIDER; 'local' or none: the offline tuner sets the declared params).",
    ),
    model: str | None = typer.Option(None, "--model", help="The model (or provider:model)."),
    max_calls: int | None = typer.Option(
        None, "--max-calls", help="Stop cleanly after this many model calls (one a generation)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
) -> None:
    """Evolve a source file, gated by correctness and a paired benchmark: the offline tuner
    sets its declared parameters, or a model (--provider) writes whole candidates."""
    from ..app import evolve as use_case

    summary = use_case.evolve(
        spec, generations, seed, run_id, generation_printer(as_json), provider, model, max_calls
    )
    print_evolved(summary, as_json)


def print_evolved(summary: dict, as_json: bool) -> None:
    """The run's summary: JSON, or its outcome in a line and where its artifacts are."""
    from ..app import evolve as use_case

    if as_json:
        print_json(summary)
        return
    champion = summary["champion"]
    name = use_case.gain_label(summary["metric"]["name"], summary["metric"]["direction"])
    if champion["generation"] == 0:
        result = "no candidate beat the baseline at the stated confidence"
    else:
        result = (
            f"champion gen {champion['generation']} {json.dumps(champion['params'])}: "
            f"{name} {_speed(champion['speedup_vs_baseline'])} over the baseline "
            f"(>= {_speed(champion['speedup_lower_bound'])} "
            f"{use_case.bound_label(champion['confirmation'])})"
        )
        if not champion["confirmed"]:
            result += ", NOT confirmed against the baseline on fresh pairs"
    sys.stdout.write(
        f"run {summary['run_id']} {summary['status']}: {summary['stop_reason']}; {result}\n"
    )
    for name, path in summary["artifacts"].items():
        sys.stdout.write(f"{name.replace('_', ' ')}: {path}\n")
