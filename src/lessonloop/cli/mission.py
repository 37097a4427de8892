"""``mission``: a verifier-driven goal (the use case in ``app/mission.py``; here, the flags and
what is printed). ``mission show ID`` and ``mission apply ID`` inspect and apply one."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..errors import UsageError
from .output import print_json


def step_printer(as_json: bool):
    """A line per step: what was proposed, whether it was applied, the verifier's exit."""

    def show(step: dict) -> None:
        if as_json:
            return
        state = (
            "refused"
            if step["refused"]
            else "applied"
            if step["applied"]
            else "undone"
            if step.get("reverted")
            else "not applied"
        )
        line = f"step {step['step_index']}: {step['kind']} {state} — {step['message'][:160]}"
        if step["verifier_output"] is not None:
            line += f"; verifier exit {step['verifier_exit']}"
        sys.stdout.write(" ".join(line.split("\n")) + "\n")
        sys.stdout.flush()

    return show


def _count(things: list | int, word: str) -> str:
    number = things if isinstance(things, int) else len(things)
    return f"{number} {word}" + ("" if number == 1 else "s")


def _print_summary(summary: dict) -> None:
    sys.stdout.write(
        f"mission {summary['run_id']} {summary['status']} after {_count(summary['steps'], 'step')} "
        f"({_count(summary['calls'], 'call')})"
        + (f": {summary['stop_reason']}" if summary["stop_reason"] else "")
        + "\n"
    )
    sys.stdout.write(f"diff: {summary['artifacts']['diff']}\n")
    if summary["status"] == "succeeded":
        sys.stdout.write(
            f"apply it to {summary['workspace_of']} with `lessonloop mission apply "
            f"{summary['run_id']}`\n"
        )


def mission(
    words: list[str] | None = typer.Argument(
        None,
        help='"GOAL" to start a mission (none with --run-id continues one); `show ID` or '
        "`apply ID` for an existing one.",
    ),
    verifier: str | None = typer.Option(
        None, "--verifier", help="Shell command that exits 0 when the goal is met."
    ),
    workspace: Path | None = typer.Option(
        None, "--workspace", help="The folder to work on (copied; default: the current one)."
    ),
    max_steps: int | None = typer.Option(None, "--max-steps", help="Steps at most (default 10)."),
    max_calls: int | None = typer.Option(
        None, "--max-calls", help="Stop after this many provider calls (the mission's)."
    ),
    allow: list[str] = typer.Option(
        [], "--allow", help="A command the model may run (repeatable; its arguments may vary)."
    ),
    run_id: str | None = typer.Option(
        None, "--run-id", help="Name the mission; an existing id continues it."
    ),
    provider: str | None = typer.Option(None, "--provider", help="The model's provider."),
    model: str | None = typer.Option(None, "--model", help="The model."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Work toward GOAL one model-proposed change at a time, until --verifier passes."""
    from ..app import mission as use_case

    words = words or []
    if len(words) == 2 and words[0] in ("show", "apply"):
        if words[0] == "show":
            summary = use_case.show(words[1])
            if as_json:
                print_json(summary)
                return
            for step in summary["steps"]:
                step_printer(False)(step)
            _print_summary(summary)
            return
        applied = use_case.apply(words[1])
        if as_json:
            print_json(applied)
            return
        changed = ", ".join(applied["changed"]) or "nothing (the diff is empty)"
        sys.stdout.write(f"applied to {applied['applied_to']}: {changed}\n")
        return
    if len(words) == 1 and words[0] in ("show", "apply"):
        raise UsageError(
            f"`lessonloop mission {words[0]} ID`: which mission (see `lessonloop list`)"
        )
    if len(words) > 1 or (not words and run_id is None):
        raise UsageError('give one "GOAL" in quotes (or --run-id ID), `show ID` or `apply ID`')
    goal = words[0] if words else None
    if goal is not None and not as_json:
        shown = use_case.stored_goal(goal)
        if shown != goal.strip():  # the model gets the goal as it is stored: redacted
            sys.stderr.write(
                f"note: the goal holds what reads as a secret and is stored and shown to the "
                f"model as {shown!r}; reword it if that hides what the model needs\n"
            )
    summary = use_case.mission(
        goal,
        verifier,
        workspace,
        max_steps,
        max_calls,
        allow,
        run_id,
        provider,
        model,
        step_printer(as_json),
    )
    print_mission(summary, as_json)


def print_mission(summary: dict, as_json: bool) -> None:
    """The mission's summary (JSON or lines); exit 1 unless the verifier passed."""
    if as_json:
        print_json(summary)
    else:
        _print_summary(summary)
    if summary["status"] != "succeeded":
        raise typer.Exit(1)
