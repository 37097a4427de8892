"""``improve``, ``judge`` and ``solve``: agent tasks scored by verifiers and judges."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .output import print_json

MAX_CALLS_HELP = "Stop cleanly after this many provider calls (the run's; resumable)."
MAX_TOKENS_HELP = "Stop cleanly once this many tokens (in + out) are spent."


def execute_improve(
    store,
    spec,
    path: Path,
    provider,
    model,
    run_id,
    as_json: bool,
    max_calls: int | None = None,
    max_tokens: int | None = None,
) -> None:
    from ..errors import LessonloopError
    from ..tasks import improve

    def show(event: dict) -> None:
        if event["event"] == "generation_completed" and not as_json:
            p = event["payload"]
            scored = "judge failed" if p.get("judge_failed") else f"score {p['mean_score']:.4f}"
            sys.stdout.write(
                f"round {p['generation']}: {scored} "
                f"({p['gate_decision']}) — {p.get('rationale', '')}\n"
            )
            sys.stdout.flush()

    summary = improve.start(
        store,
        spec,
        path,
        provider,
        model,
        run_id,
        observer=show,
        max_calls=max_calls,
        max_tokens=max_tokens,
    )
    if summary["status"] == "failed":
        raise LessonloopError(f"run {summary['run_id']} failed: {summary['stop_reason']}")
    if as_json:
        print_json(summary)
    else:
        sys.stdout.write(
            f"run {summary['run_id']} {summary['status']}: {summary['stop_reason']}; "
            f"best score {summary['best_score']:.4f}\n"
        )
        if summary["best_output"]:
            sys.stdout.write(f"best output: {summary['best_output']}\n")


def register(app: typer.Typer) -> None:
    @app.command()
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
        as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
    ) -> None:
        """Improve an output round by round: generate, verify, judge, revise with the feedback."""
        from ..loop.budget import check_limits
        from ..store import open_store
        from ..tasks import spec as task_spec

        check_limits(max_calls, max_tokens)
        spec, path = task_spec.read(task)
        with open_store() as store:
            execute_improve(
                store, spec, path, provider, model, run_id, as_json, max_calls, max_tokens
            )

    @app.command()
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
        from ..files import read_user_file
        from ..store import open_store
        from ..tasks import evaluate
        from ..tasks import spec as task_spec

        spec, path = task_spec.read(task)
        text = read_user_file(output, "output file")
        # a judge that gives no usable verdict raises JudgeFailed (exit 1), never scores 0
        result = evaluate.judge_once(spec, path.parent, text, open_store, provider, model)
        if as_json:
            print_json(result.to_dict())
        else:
            verifier = {None: "none", True: "passed", False: "FAILED"}[result.passed_verifier]
            sys.stdout.write(
                f"score {result.score:.4f} (verifier {verifier}; epoch {result.epoch})\n"
            )
            for name, value in result.dimensions.items():
                sys.stdout.write(f"  {name}: {value:.3f}\n")
            if result.reasoning:
                sys.stdout.write(f"{result.reasoning}\n")

    @app.command()
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
        from .. import config
        from ..errors import UsageError
        from ..loop.budget import Budget, Metered, check_limits
        from ..providers.registry import build
        from ..store import open_store
        from ..store import runs as run_store
        from ..tasks import solve as task_solve
        from ..tasks.spec import dump

        check_limits(max_calls, max_tokens)
        settings = config.load(flags={"PROVIDER": provider, "MODEL": model})
        route = settings.route("competitor")
        if route.kind == "local":
            raise UsageError(
                "solve needs a model to design the task: set --provider (e.g. "
                "--provider ollama --model llama3.2, or scripted:FILE.json) or "
                "LESSONLOOP_PROVIDER"
            )
        with open_store() as store:
            budget = Budget(
                max_calls,
                max_tokens,
                hint=lambda flag: f"no valid task was designed yet; give solve a larger {flag}",
            )
            designer = Metered(
                build(route, settings),
                budget,
                lambda c: run_store.record_call(
                    store, None, None, None, "designer", designer.name, c
                ),
            )
            # the designer works on the competitor's route, with its configured timeout
            spec = task_solve.design(goal, designer, timeout=settings.timeout("competitor", route))
            path = task_solve.save(spec)
            (sys.stderr if as_json else sys.stdout).write(
                f"designed task saved to {path}:\n{dump(spec)}\n"
            )
            left = budget.remaining()  # what designing left is the run's budget
            spent = [what for what, value in left.items() if value == 0]
            if spent:
                flag = f"--max-{spent[0]}"
                reason = (
                    f"{spent[0]} budget spent designing the task; improve it with "
                    f"`lessonloop improve {path} {flag} N`"
                )
                if as_json:
                    print_json(
                        {
                            "status": "stopped",
                            "stop_reason": reason,
                            "task": str(path),
                            "run_id": None,
                        }
                    )
                else:
                    sys.stdout.write(reason + "\n")
                return
            execute_improve(
                store,
                spec,
                path.resolve(),
                provider,
                model,
                None,
                as_json,
                left["calls"],
                left["tokens"],
            )
