"""The run inspection commands: ``status``, ``show``, ``list``, ``watch``, ``export`` — each
prints what ``app/inspection.py`` answers. ``fast.py`` calls them without Typer."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

from ..errors import UsageError
from .output import fmt, generation_line, print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer


KIND_STEPS = {"evolve": "candidates", "mission": "steps"}
KIND_BEST = {
    "evolve": "the champion's speed-up over the baseline",
    "mission": "1: the verifier passed",
}


def status_command(
    run_id: Annotated[str, typer.Argument(help="Run id (see `lessonloop list`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print run-status-v1 JSON.")] = False,
) -> None:
    """Show a run's state and every generation's score and gate decision."""
    from ..app.inspection import status

    document = status(run_id)
    if as_json:
        print_json(document)
        return
    run = document["run"]
    reason = f" ({run['stop_reason']})" if run["stop_reason"] else ""
    tournament = (
        f" (tournament {fmt(run['tournament_score'])})"
        if run["tournament_score"] is not None
        else ""
    )
    lines = [
        f"run {run['run_id']}  scenario {run['scenario']}  status {run['status']}{reason}",
        f"provider {run['agent_provider']}  generations {run['generations_completed']}/"
        f"{run['target_generations']}  best {fmt(run['best_score'])}{tournament}"
        f"  elo {fmt(run['current_elo'], '.1f')}",
    ]
    if run["kind"] in ("evolve", "mission"):  # candidates or steps: no tournament, no Elo
        lines[1] = (
            f"provider {run['agent_provider']}  {KIND_STEPS[run['kind']]} "
            f"{run['generations_completed']}/{run['target_generations']}  "
            f"best {fmt(run['best_score'])} ({KIND_BEST[run['kind']]})"
        )
    lines += [generation_line(generation) for generation in document["generations"]]
    sys.stdout.write("\n".join(lines) + "\n")


def show_command(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    generation: Annotated[
        int | None,
        typer.Option("--generation", "-g", help="Generation index (default: latest)."),
    ] = None,
    best: Annotated[
        bool,
        typer.Option(
            "--best",
            help="The best strategy: the incumbent, from the latest advance (best_score is its validated score).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print run-show-v1 JSON.")] = False,
) -> None:
    """Show one generation: its strategy, scores, gate decisions and analysis."""
    from ..app.inspection import show

    if best and generation is not None:
        raise UsageError("use either --generation or --best, not both")
    document = show(run_id, "best" if best else "latest" if generation is None else generation)
    if as_json:
        print_json(document)
        return
    shown = document["generation"]
    lines = [generation_line(shown), "strategy: " + json.dumps(shown["strategy"], sort_keys=True)]
    lines += [
        f"  attempt {decision['attempt']}: {decision['decision']} — {decision['rationale']}"
        for decision in shown["gate_decisions"]
    ]
    lines += ["", shown["analysis"].rstrip()]
    sys.stdout.write("\n".join(lines) + "\n")


def list_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of runs.")] = False,
) -> None:
    """List runs, newest first."""
    from ..app.inspection import list_runs, unstarted_runs

    runs = list_runs()
    if as_json:
        print_json(runs)
        return
    asked = unstarted_runs(runs)  # their ids can be resumed
    if not runs and not asked:
        sys.stdout.write("no runs yet: try `lessonloop run grid_ctf --iterations 30`\n")
        return
    rows = [("RUN ID", "KIND", "SCENARIO", "STATUS", "GENERATIONS", "BEST", "CREATED")]
    rows += [
        (
            run["run_id"],
            "?",
            run["scenario"],
            "interrupted",
            f"0/{run['target_generations'] or '?'}",
            fmt(None),
            run["created_at"],
        )
        for run in asked
    ]
    rows += [
        (
            run["run_id"],
            run["kind"],
            run["scenario"],
            run["status"],
            f"{run['generations_completed']}/{run['target_generations']}",
            fmt(run["best_score"]),
            run["created_at"],
        )
        for run in runs
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    for row in rows:  # a header, then columns as wide as their longest cell
        cells = [cell.ljust(width) for cell, width in zip(row, widths)]
        sys.stdout.write("  ".join([*cells, row[-1]]) + "\n")


def watch_command(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    ndjson: Annotated[
        bool, typer.Option("--ndjson", "--json", help="Print raw events, one JSON per line.")
    ] = False,
    interval: Annotated[float, typer.Option("--interval", help="Seconds between polls.")] = 0.25,
) -> None:
    """Follow a run's events while it runs; print what happened so far when it is not running."""
    from ..app.inspection import RunWatch

    watch = RunWatch(run_id, interval)
    target = watch.run["target_generations"]
    for event in watch:
        text = json.dumps(event, sort_keys=True) if ndjson else describe(event, target)
        if text:
            sys.stdout.write(text + "\n")
        sys.stdout.flush()
    if not ndjson and watch.unfinished:
        sys.stdout.write(
            f"run {run_id} is not running (resume it with `lessonloop resume {run_id}`)\n"
        )


def export_command(
    run_id: Annotated[str, typer.Argument(help="Run id.")],
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="json (everything) or training-jsonl (prompt/completion of kept generations).",
        ),
    ] = "json",
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Write to a file instead of stdout.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Errors as JSON (the export itself is always JSON).")
    ] = False,
) -> None:
    """Export a run: everything as JSON, or training records of the generations it kept."""
    from ..app.inspection import export

    text = export(run_id, format)
    if output is None:
        sys.stdout.write(text)
        return
    if not output:
        raise UsageError("--output needs a file name")
    if not _is_regular_or_missing(output):
        raise UsageError(f"refusing to write {output}: it exists and is not a regular file")
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None


def _is_regular_or_missing(path: str) -> bool:
    """Never write through a symlink, device or directory the user may not have meant."""
    import os
    import stat

    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return True
    return stat.S_ISREG(mode)


def describe(event: dict, target: int) -> str | None:
    """A human line for an event, or None for events that only matter to machines."""
    payload = event.get("payload", {})
    name = event.get("event")
    if name == "generation_completed":
        return generation_line(payload, target)
    if name in ("run_started", "run_resumed"):
        return (
            f"{name.replace('_', ' ')}: {payload.get('scenario')} "
            f"({payload.get('completed_generations', 0)}/{payload.get('target_generations')} done)"
        )
    if name and name.startswith("run_"):
        reason = f" ({payload['reason']})" if payload.get("reason") else ""
        return (
            f"{name.replace('_', ' ')}{reason}: {payload.get('generations_executed')} generations, "
            f"best {fmt(payload.get('best_score'))}"
        )
    return None
