"""``run`` and ``resume``: drive the generation loop and show its progress."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from .. import paths
from .output import generation_line, print_json


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
            line = progress_line(payload, self.target)
            self.progress.console.print(f"[{color}]{line}[/{color}]", highlight=False)
            self.progress.advance(self.task)


DEFAULT_ITERATIONS = 10


def _execute(store, run_id: str, as_json: bool, target: int | None = None) -> None:
    from ..loop.runner import Runner

    runner = Runner(store, run_id)
    total = target or runner.run["target_generations"]
    display = _PlainProgress(total, quiet=as_json)
    if sys.stdout.isatty() and not as_json:
        display = _RichProgress(total)
    with display:
        runner.observer = display
        summary = runner.execute(target)
    if as_json:
        print_json(summary)
    else:
        report = paths.run_dir(run_id) / "report.md"
        sys.stdout.write(
            f"run {run_id} {summary['status']}: {summary['generations_executed']} generations, "
            f"best score {summary['best_score']:.4f} (validated"
            + (f"; {summary['tournament_score']:.4f} in its tournament"
               if summary.get("tournament_score") is not None else "")
            + f"), elo {summary['current_elo']:.1f}\n"
            f"report: {report}\n"
        )


def register(app: typer.Typer) -> None:
    @app.command()
    def run(
        scenario: str = typer.Argument(..., help="Built-in name, entry point, or path/file.py:ClassName."),
        iterations: Optional[int] = typer.Option(None, "--iterations", "-n", help="Generations to run [default: 10]."),
        provider: Optional[str] = typer.Option(None, "--provider", help="local (default), scripted:FILE, anthropic, openai, ollama, vllm, llamacpp or lmstudio; every role [default: config, then $LESSONLOOP_PROVIDER]."),
        model: Optional[str] = typer.Option(None, "--model", help="Model for the provider (or provider:model in --provider)."),
        max_calls: Optional[int] = typer.Option(None, "--max-calls", help="Stop the run cleanly after this many provider calls."),
        max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="Stop the run cleanly once this many tokens (in + out) are spent."),
        matches: Optional[int] = typer.Option(None, "--matches", help="Paired matches per attempt [default: 5]."),
        seed: Optional[int] = typer.Option(None, "--seed", help="Run seed: same seed, same run [default: 0]."),
        run_id: Optional[str] = typer.Option(None, "--run-id", help="Name the run; an existing id resumes it."),
        max_retries: Optional[int] = typer.Option(None, "--max-retries", help="Retries per generation before a rollback [default: 2]."),
        min_delta: Optional[float] = typer.Option(None, "--min-delta", help="Mean paired delta needed to advance [default: 0.002]."),
        match_timeout: Optional[float] = typer.Option(None, "--match-timeout", help="Seconds before a match's worker is killed [default: 10]."),
        workers: Optional[int] = typer.Option(None, "--workers", help="Match worker processes [default: 0 = up to 2]."),
        no_incumbent: bool = typer.Option(False, "--no-incumbent", help="Start from a fresh strategy, not the best known one (keeps the playbook)."),
        no_knowledge: bool = typer.Option(False, "--no-knowledge", help="Leave the playbook, hints and dead ends out of the context."),
        fresh: bool = typer.Option(False, "--fresh", help="Both: no carried-over strategy and no knowledge in the context."),
        context_budget: Optional[int] = typer.Option(None, "--context-budget", help="Token budget of the competitor's context [default: 6000]."),
        as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
    ) -> None:
        """Run N generations of a scenario (offline by default) and report the best strategy.

        Re-running an existing --run-id resumes it (a larger --iterations extends it).
        """
        from ..loop.runner import RunOptions, check_iterations, create_or_reuse
        from ..scenarios import registry
        from ..store import open_store
        from ..store import runs as run_store

        given = {"provider": provider, "model": model, "max_calls": max_calls,
                 "max_tokens": max_tokens, "matches": matches, "seed": seed, "max_retries": max_retries,
                 "min_delta": min_delta, "match_timeout": match_timeout, "workers": workers,
                 "context_budget": context_budget,
                 "carry_incumbent": False if (no_incumbent or fresh) else None,
                 "knowledge": False if (no_knowledge or fresh) else None}
        overrides = {name: value for name, value in given.items() if value is not None}
        if iterations is not None:
            check_iterations(iterations)
        RunOptions(**overrides).check()
        registry.load(scenario)  # an unknown scenario fails before anything is written
        with open_store() as store:
            existing = run_store.find_run(store, run_id) if run_id else None
            target = iterations if iterations is not None else (
                existing["target_generations"] if existing is not None else DEFAULT_ITERATIONS)
            rid = create_or_reuse(store, scenario, target, overrides, run_id)
            _execute(store, rid, as_json, target)

    @app.command()
    def resume(
        run_id: str = typer.Argument(..., help="The run to continue."),
        max_calls: Optional[int] = typer.Option(None, "--max-calls", help="A new call budget for the whole run."),
        max_tokens: Optional[int] = typer.Option(None, "--max-tokens", help="A new token budget for the whole run."),
        as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
    ) -> None:
        """Continue a stopped, failed or crashed run; finished generations are not redone."""
        from ..loop.runner import create_or_reuse
        from ..store import open_store
        from ..store import runs as run_store

        budgets = {name: value for name, value in
                   (("max_calls", max_calls), ("max_tokens", max_tokens)) if value is not None}
        with open_store() as store:
            run = run_store.get_run(store, run_id)
            if run["scenario"].startswith("task:"):  # an improve run: continue its rounds
                from pathlib import Path

                from ..tasks.spec import parse
                from .tasks import _improve

                stored = run_store.loads(run["config_json"])["task"]
                spec = parse(stored, f"the task stored with run {run_id}")
                _improve(store, spec, Path(run["scenario_ref"]), None, None, run_id, as_json,
                         max_calls, max_tokens)
                return
            if budgets:
                create_or_reuse(store, run["scenario_ref"], run["target_generations"], budgets,
                                run_id)
            _execute(store, run_id, as_json)
