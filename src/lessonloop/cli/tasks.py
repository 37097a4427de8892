"""``improve``, ``judge`` and ``solve``: agent tasks scored by verifiers and judges (the use
cases in ``app/tasks.py``; here, the flags and what is printed)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .output import print_json

MAX_CALLS_HELP = "Stop cleanly after this many provider calls (the run's; resumable)."
MAX_TOKENS_HELP = "Stop cleanly once this many tokens (in + out) are spent."


def round_printer(as_json: bool):
    """A line per finished round (none with --json)."""

    def show(event: dict) -> None:
        if event["event"] == "generation_completed" and not as_json:
            payload = event["payload"]
            scored = (
                "judge failed"
                if payload.get("judge_failed")
                else f"score {payload['mean_score']:.4f}"
            )
            sys.stdout.write(
                f"round {payload['generation']}: {scored} "
                f"({payload['gate_decision']}) — {payload.get('rationale', '')}\n"
            )
            sys.stdout.flush()

    return show


def print_improved(summary: dict, as_json: bool) -> None:
    """An improve run's summary: JSON, or a line and where its best output is."""
    if as_json:
        print_json(summary)
    else:
        sys.stdout.write(
            f"run {summary['run_id']} {summary['status']}: {summary['stop_reason']}; "
            f"best score {summary['best_score']:.4f}\n"
        )
        if summary["best_output"]:
            sys.stdout.write(f"best output: {summary['best_output']}\n")


def improve(
    task: Path = typer.Argument(..., help="A task file (YAML or JSON)."),
    provider: str | None = typer.Option(
        None, "--provider", help="Provider for every role (see `lessonloop doctor`)."
    ),
    model: str | None = typer.Option(None, "--model", help="Model for the provider."),
    run_id: str | None = typer.Option(
        None, "--run-id", help="Name the run; an existing id continues it."
    ),
    max_calls: int | None = typer.Option(None, "--max-calls", help=MAX_CALLS_HELP),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help=MAX_TOKENS_HELP),
    review: bool = typer.Option(
        False,
        "--review",
        help="Hold what the run learns as pending until `lessonloop playbook approve`.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
) -> None:
    """Improve an output round by round: generate, verify, judge, revise with the feedback."""
    from ..app import tasks

    summary = tasks.improve(
        task, provider, model, run_id, max_calls, max_tokens, round_printer(as_json), review
    )
    print_improved(summary, as_json)


def judge(
    task: Path = typer.Argument(..., help="A task file (YAML or JSON)."),
    output: Path = typer.Option(..., "--output", help="The output to score."),
    provider: str | None = typer.Option(
        None, "--provider", help="Judge provider (default: the judge route)."
    ),
    model: str | None = typer.Option(None, "--model", help="Judge model."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdict as JSON."),
) -> None:
    """Score one output: verifier (offline) and, for a task with a rubric, the judge."""
    from ..app import tasks

    result = tasks.judge_file(task, output, provider, model)
    if as_json:
        print_json(result.to_dict())
    else:
        verifier = {None: "none", True: "passed", False: "FAILED"}[result.passed_verifier]
        sys.stdout.write(f"score {result.score:.4f} (verifier {verifier}; epoch {result.epoch})\n")
        for name, value in result.dimensions.items():
            sys.stdout.write(f"  {name}: {value:.3f}\n")
        if result.reasoning:
            sys.stdout.write(f"{result.reasoning}\n")


def solve(
    goal: str = typer.Argument(..., help="What you want an agent to get good at."),
    provider: str | None = typer.Option(None, "--provider", help="Provider for every role."),
    model: str | None = typer.Option(None, "--model", help="Model for the provider."),
    max_calls: int | None = typer.Option(
        None,
        "--max-calls",
        help="Provider calls for the whole command: designing, then improving.",
    ),
    max_tokens: int | None = typer.Option(
        None,
        "--max-tokens",
        help="Tokens (in + out) for the whole command: designing, then improving.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
) -> None:
    """Have a model design a task for GOAL (saved under .lessonloop/tasks/), then improve it."""
    from ..app import tasks

    def designed(path: Path, text: str) -> None:
        (sys.stderr if as_json else sys.stdout).write(f"designed task saved to {path}:\n{text}\n")

    summary = tasks.solve(
        goal, provider, model, max_calls, max_tokens, designed, round_printer(as_json)
    )
    if summary["run_id"] is None:  # designing spent the budget: no run
        if as_json:
            print_json(summary)
        else:
            sys.stdout.write(summary["stop_reason"] + "\n")
        return
    print_improved(summary, as_json)


def register(app: typer.Typer) -> None:
    for command in (improve, judge, solve):
        app.command()(command)
