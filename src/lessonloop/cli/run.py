"""``run`` and ``resume``: drive the generation loop and show its progress."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from .. import paths
from ..errors import UsageError
from .output import generation_line, print_json


class _PlainProgress:
    """A line per generation, for pipes, logs and CI."""

    def __init__(self, target: int):
        self.target = target

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __call__(self, event: dict) -> None:
        if event["event"] == "generation_completed":
            sys.stdout.write(generation_line(event["payload"], self.target) + "\n")
            sys.stdout.flush()


class _RichProgress(_PlainProgress):
    """A live bar with a coloured line per generation, for terminals."""

    COLORS = {"advance": "green", "retry": "yellow", "rollback": "red"}

    def __enter__(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), transient=True)
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
            line = generation_line(payload, self.target)
            self.progress.console.print(f"[{color}]{line}[/{color}]", highlight=False)
            self.progress.advance(self.task)


class _Silent(_PlainProgress):
    def __init__(self):
        pass

    def __call__(self, event: dict) -> None:
        return None


def _execute(store, run_id: str, as_json: bool) -> None:
    from ..loop.runner import Runner

    runner = Runner(store, run_id)
    display = _Silent() if as_json else (
        _RichProgress(runner.run["target_generations"]) if sys.stdout.isatty()
        else _PlainProgress(runner.run["target_generations"]))
    with display:
        runner.observer = display
        summary = runner.execute()
    if as_json:
        print_json(summary)
    else:
        report = paths.run_dir(run_id) / "report.md"
        sys.stdout.write(
            f"run {run_id} {summary['status']}: {summary['generations_executed']} generations, "
            f"best score {summary['best_score']:.4f}, elo {summary['current_elo']:.1f}\n"
            f"report: {report}\n"
        )


def register(app: typer.Typer) -> None:
    @app.command()
    def run(
        scenario: str = typer.Argument(..., help="Built-in name, entry point, or path/file.py:ClassName."),
        iterations: int = typer.Option(10, "--iterations", "-n", help="Generations to run."),
        provider: Optional[str] = typer.Option(None, "--provider", help="local (default) or scripted:FILE."),
        matches: int = typer.Option(5, "--matches", help="Paired matches per attempt."),
        seed: int = typer.Option(0, "--seed", help="Run seed: same seed, same run."),
        run_id: Optional[str] = typer.Option(None, "--run-id", help="Name the run; an existing id resumes it."),
        fresh: bool = typer.Option(False, "--fresh", help="Start without carried-over knowledge (runs start fresh until knowledge carry-over lands)."),
        max_retries: int = typer.Option(2, "--max-retries", help="Retries per generation before a rollback."),
        min_delta: float = typer.Option(0.005, "--min-delta", help="Mean paired delta needed to advance."),
        match_timeout: float = typer.Option(10.0, "--match-timeout", help="Seconds before a match's worker is killed."),
        as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
    ) -> None:
        """Run N generations of a scenario (offline by default) and report the best strategy."""
        from ..loop.runner import RunOptions, create_or_reuse
        from ..scenarios import registry
        from ..store import open_store

        if iterations < 1:
            raise UsageError("--iterations must be at least 1")
        if matches < 1:
            raise UsageError("--matches must be at least 1")
        if max_retries < 0:
            raise UsageError("--max-retries cannot be negative")
        if match_timeout <= 0:
            raise UsageError("--match-timeout must be positive")
        registry.load(scenario)  # an unknown scenario fails before anything is written
        options = RunOptions(
            provider=provider or os.environ.get("LESSONLOOP_PROVIDER") or "local",
            matches=matches, seed=seed, max_retries=max_retries, min_delta=min_delta,
            match_timeout=match_timeout,
        )
        with open_store() as store:
            rid = create_or_reuse(store, scenario, iterations, options, run_id)
            _execute(store, rid, as_json)

    @app.command()
    def resume(
        run_id: str = typer.Argument(..., help="The run to continue."),
        as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
    ) -> None:
        """Continue a stopped, failed or crashed run; finished generations are not redone."""
        from ..store import open_store
        from ..store import runs as run_store

        with open_store() as store:
            run_store.get_run(store, run_id)
            _execute(store, run_id, as_json)
