"""``run`` and ``resume``: drive the generation loop and show its progress."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

from .. import paths
from .output import generation_line, print_json

if TYPE_CHECKING:
    import typer
else:  # ``run`` is called without Typer (``fast.py``): its annotations are Typer's to read
    from .lazy_typer import typer


def progress_line(payload: dict, target: int) -> str:
    """A generation's line, with why a gain was not kept when it was not (the gate's words)."""
    line = generation_line(payload, target)
    reason = payload.get("reason")
    if reason and payload.get("gate_decision") != "advance":
        line += f"  ({reason})"
    return line


class _PlainProgress:
    """A line per generation, for pipes, logs and CI."""

    def __init__(self, target: int, quiet: bool = False):
        self.target = target
        self.quiet = quiet

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __call__(self, event: dict) -> None:
        if event["event"] == "generation_completed" and not self.quiet:
            sys.stdout.write(progress_line(event["payload"], self.target) + "\n")
            sys.stdout.flush()


class _RichProgress(_PlainProgress):
    """A live bar with a coloured line per generation, for terminals."""

    COLORS = {"advance": "green", "retry": "yellow", "rollback": "red"}

    def __enter__(self):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
        )
        self.progress.__enter__()
        self.task = self.progress.add_task("generations", total=self.target)
        return self

    def __exit__(self, *exc):
        self.progress.__exit__(*exc)

    def __call__(self, event: dict) -> None:
        payload = event["payload"]
        if event["event"] == "run_resumed" and payload.get("completed_generations"):
            self.progress.update(self.task, completed=payload["completed_generations"])
        if event["event"] == "generation_completed":
            color = self.COLORS.get(payload.get("gate_decision"), "white")
            line = progress_line(payload, self.target)
            self.progress.console.print(f"[{color}]{line}[/{color}]", highlight=False)
            self.progress.advance(self.task)


DEFAULT_ITERATIONS = 10  # app.runs.DEFAULT_ITERATIONS (not imported: `--help` stays light)


def provider_help() -> str:
    """--provider's help: every provider registered when Typer reads ``run``'s annotations
    (``register``: plugins included)."""
    from ..app.runs import provider_help as providers

    return f"{providers()}; every role [default: config, then $LESSONLOOP_PROVIDER]."


def progress(as_json: bool):
    """The display of a run's progress: a live bar on a terminal, else a line per generation
    (none with --json); ``app.runs`` calls it with the run's target generations."""

    def display(total: int) -> _PlainProgress:
        if sys.stdout.isatty() and not as_json:
            return _RichProgress(total)
        return _PlainProgress(total, quiet=as_json)

    return display


def print_summary(summary: dict, as_json: bool) -> None:
    """A scenario run's summary: JSON, or a line and where its report is."""
    if as_json:
        print_json(summary)
        return
    report = paths.run_dir(summary["run_id"]) / "report.md"
    sys.stdout.write(
        f"run {summary['run_id']} {summary['status']}: {summary['generations_executed']} "
        f"generations, best score {summary['best_score']:.4f} (validated"
        + (
            f"; {summary['tournament_score']:.4f} in its tournament"
            if summary.get("tournament_score") is not None
            else ""
        )
        + f"), elo {summary['current_elo']:.1f}\n"
        f"report: {report} (and report.html beside it: open it with `lessonloop report "
        f"{summary['run_id']} --open`)\n"
    )


def run(
    scenario: Annotated[
        str, typer.Argument(help="Built-in name, entry point, or path/file.py:ClassName.")
    ],
    iterations: Annotated[
        int | None,
        typer.Option("--iterations", "-n", help="Generations to run [default: 10]."),
    ] = None,
    provider: Annotated[str | None, typer.Option("--provider", help=provider_help())] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Model for the provider (or provider:model in --provider)."),
    ] = None,
    max_calls: Annotated[
        int | None,
        typer.Option("--max-calls", help="Stop the run cleanly after this many provider calls."),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens", help="Stop the run cleanly once this many tokens (in + out) are spent."
        ),
    ] = None,
    matches: Annotated[
        int | None, typer.Option("--matches", help="Paired matches per attempt [default: 5].")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Run seed: same seed, same run [default: 0].")
    ] = None,
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Name the run; an existing id resumes it.")
    ] = None,
    max_retries: Annotated[
        int | None,
        typer.Option(
            "--max-retries", help="Retries per generation before a rollback [default: 2]."
        ),
    ] = None,
    min_delta: Annotated[
        float | None,
        typer.Option("--min-delta", help="Mean paired delta needed to advance [default: 0.002]."),
    ] = None,
    match_timeout: Annotated[
        float | None,
        typer.Option(
            "--match-timeout", help="Seconds before a match's worker is killed [default: 10]."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="Match worker processes [default: 0 = up to 2]."),
    ] = None,
    no_incumbent: Annotated[
        bool,
        typer.Option(
            "--no-incumbent",
            help="Start from a fresh strategy, not the best known one (keeps the playbook).",
        ),
    ] = False,
    no_knowledge: Annotated[
        bool,
        typer.Option(
            "--no-knowledge", help="Leave the playbook, hints and dead ends out of the context."
        ),
    ] = False,
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh", help="Both: no carried-over strategy and no knowledge in the context."
        ),
    ] = False,
    context_budget: Annotated[
        int | None,
        typer.Option(
            "--context-budget", help="Token budget of the competitor's context [default: 6000]."
        ),
    ] = None,
    review: Annotated[
        bool,
        typer.Option(
            "--review",
            help="Hold the lessons the run learns as pending until `lessonloop playbook approve`.",
        ),
    ] = False,
    context_trials: Annotated[
        str | None,
        typer.Option(
            "--context-trials",
            help="off, screen or full: the coach's edits are served only after winning matched "
            "trials (with a model competitor, two calls a pair: needs --max-calls) [default: "
            "screen with the offline competitor, else off].",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run summary as JSON.")] = False,
) -> None:
    """Run N generations of a scenario (offline by default) and report the best strategy.

    Re-running an existing --run-id resumes it (a larger --iterations extends it).
    """
    from ..app import runs

    given = {
        "provider": provider,
        "model": model,
        "max_calls": max_calls,
        "max_tokens": max_tokens,
        "matches": matches,
        "seed": seed,
        "max_retries": max_retries,
        "min_delta": min_delta,
        "match_timeout": match_timeout,
        "workers": workers,
        "context_budget": context_budget,
        "carry_incumbent": False if (no_incumbent or fresh) else None,
        "knowledge": False if (no_knowledge or fresh) else None,
        "review": True if review else None,
        "context_trials": context_trials,
    }
    overrides = {name: value for name, value in given.items() if value is not None}

    def announce(rid: str) -> None:  # its id once the flags are good, before what takes time
        if not as_json:
            sys.stdout.write(f"run {rid} (if it is interrupted: `lessonloop resume {rid}`)\n")
            sys.stdout.flush()

    summary = runs.start(scenario, iterations, overrides, run_id, announce, progress(as_json))
    print_summary(summary, as_json)


def resume(
    run_id: Annotated[str, typer.Argument(help="The run to continue.")],
    max_calls: Annotated[
        int | None, typer.Option("--max-calls", help="A new call budget for the whole run.")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="A new token budget for the whole run.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run summary as JSON.")] = False,
) -> None:
    """Continue a stopped, failed or crashed run; finished generations are not redone."""
    from ..app import runs
    from .evolve import generation_printer, print_evolved
    from .mission import print_mission, step_printer
    from .tasks import print_improved, round_printer

    budgets = {
        name: value
        for name, value in (("max_calls", max_calls), ("max_tokens", max_tokens))
        if value is not None
    }
    kind, summary = runs.resume(
        run_id,
        budgets,
        watch=progress(as_json),
        on_round=round_printer(as_json),
        replay=lambda asked: _replay(asked, budgets, as_json),
        shows={"evolve": generation_printer(as_json), "mission": step_printer(as_json)},
    )
    if kind == "task" and summary is not None:
        print_improved(summary, as_json)
    elif kind == "evolve" and summary is not None:
        print_evolved(summary, as_json)
    elif kind == "mission" and summary is not None:
        print_mission(summary, as_json)
    elif kind == "scenario" and summary is not None:
        print_summary(summary, as_json)


def register(app: typer.Typer) -> None:
    app.command()(run)
    app.command()(resume)


def _replay(asked: dict, budgets: dict, as_json: bool) -> None:
    """Run the command line ``started`` kept (``run`` or ``improve``, with its --run-id), in
    the folder it was typed in, on this home; resume's budgets and --json apply."""
    import os

    from typer.main import get_command

    from .app import app

    argv = [arg for arg in asked["argv"] if arg != "--json"]
    for name, value in budgets.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    if as_json:
        argv.append("--json")
    home, folder = os.environ.get("LESSONLOOP_HOME"), os.getcwd()
    os.environ["LESSONLOOP_HOME"] = str(paths.home())  # the home stays where it is
    try:
        if os.path.isdir(asked["cwd"]):
            os.chdir(asked["cwd"])  # its relative paths (scenario, task file) mean what they meant
        get_command(app).main(args=argv, prog_name="lessonloop", standalone_mode=False)
    finally:  # as it was, for a caller in the same process
        os.chdir(folder)
        if home is None:
            del os.environ["LESSONLOOP_HOME"]
        else:
            os.environ["LESSONLOOP_HOME"] = home
