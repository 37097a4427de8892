"""Read-only commands: ``status``, ``show``, ``list``, ``watch``, ``export``.

Typer is imported only to register them: ``fast.py`` calls the ``*_command`` functions directly.

They open the database read-only, so they work on a read-only copy and never block a run.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

from .. import paths
from ..errors import NotFoundError, UsageError
from ..loop.status import generation_object, load_run, run_object, status_document
from .output import fmt, generation_line, print_json

if TYPE_CHECKING:  # Typer is imported by register() only: the fast path needs none
    import typer


def _open():
    from ..store import open_store

    return open_store(readonly=True)


def _open_for_run(run_id: str):
    try:
        return _open()
    except NotFoundError:
        raise NotFoundError(
            f"unknown run id {run_id!r} (no lessonloop database here yet)"
        ) from None


def _select(run_id: str, gens: list, generation: int | None, best: bool):
    from ..store.runs import best_generation

    if not gens:
        raise NotFoundError(f"run {run_id!r} has no completed generation yet")
    if best:
        chosen = best_generation(gens)
        if chosen is None:
            raise NotFoundError(f"run {run_id!r} has no advanced generation yet")
        return chosen
    if generation is None:
        return gens[-1]
    for g in gens:
        if g["generation_index"] == generation:
            return g
    raise NotFoundError(
        f"run {run_id!r} has no generation {generation} (completed: 1..{len(gens)})"
    )


def _match_object(row) -> dict:
    match = dict(row)
    match["dimensions"] = json.loads(match.pop("dimensions_json"))
    return match


def status_command(run_id: str, as_json: bool = False) -> None:
    """``status``: a run's state and every generation's score and gate decision."""
    with _open_for_run(run_id) as store:
        run, gens = load_run(store, run_id)
    run_obj = run_object(run, gens)
    if as_json:
        print_json(status_document(run, gens))
        return
    reason = f" ({run_obj['stop_reason']})" if run_obj["stop_reason"] else ""
    lines = [
        f"run {run['run_id']}  scenario {run['scenario']}  status {run_obj['status']}{reason}",
        f"provider {run['provider']}  generations {len(gens)}/{run['target_generations']}  "
        f"best {fmt(run_obj['best_score'])}"
        + (
            f" (tournament {fmt(run_obj['tournament_score'])})"
            if run_obj.get("tournament_score") is not None
            else ""
        )
        + f"  elo {fmt(run_obj['current_elo'], '.1f')}",
    ]
    lines += [generation_line(dict(g)) for g in gens]
    sys.stdout.write("\n".join(lines) + "\n")


def show_command(
    run_id: str, generation: int | None = None, best: bool = False, as_json: bool = False
) -> None:
    """``show``: one generation, its strategy, scores, gate decisions and analysis."""
    from ..store import runs as run_store

    if best and generation is not None:
        raise UsageError("use either --generation or --best, not both")
    with _open_for_run(run_id) as store:
        run, gens = load_run(store, run_id)
        chosen = _select(run_id, gens, generation, best)
        index = chosen["generation_index"]
        decisions = [
            d for d in run_store.gate_decisions(store, run_id) if d["generation_index"] == index
        ]
        match_rows = run_store.matches(store, run_id, index)
    gen_obj = generation_object(chosen, with_strategy=True)
    gen_obj["gate_decisions"] = [
        {
            k: d[k]
            for k in (
                "attempt",
                "decision",
                "rationale",
                "mean_delta",
                "wins",
                "losses",
                "holdout_delta",
                "pairs",
                "t_statistic",
                "lower_bound",
                "holdout_pairs",
                "holdout_lower_bound",
            )
        }
        for d in decisions
    ]
    gen_obj["matches"] = [
        {k: m[k] for k in ("attempt", "phase", "side", "seed", "score", "error")}
        for m in match_rows
    ]
    if as_json:
        print_json({"run": run_object(run, gens), "generation": gen_obj, "runtime_session": None})
        return
    lines = [
        generation_line(gen_obj),
        "strategy: " + json.dumps(gen_obj["strategy"], sort_keys=True),
    ]
    lines += [
        f"  attempt {d['attempt']}: {d['decision']} — {d['rationale']}"
        for d in gen_obj["gate_decisions"]
    ]
    lines += ["", gen_obj["analysis"].rstrip()]
    sys.stdout.write("\n".join(lines) + "\n")


def list_command(as_json: bool = False) -> None:
    """``list``: runs, newest first."""
    from ..store import runs as run_store

    try:
        store = _open()
    except NotFoundError:
        runs = []
    else:
        with store:
            runs = [
                run_object(r, run_store.generations(store, r["run_id"]))
                for r in run_store.list_runs(store)
            ]
    if as_json:
        print_json(runs)
        return
    from ..loop import request

    # killed at start-up, before their row: listed so that their ids can be resumed
    asked = request.pending({r["run_id"] for r in runs})
    if not runs and not asked:
        sys.stdout.write("no runs yet: try `lessonloop run grid_ctf --iterations 30`\n")
        return
    rows = [("RUN ID", "SCENARIO", "STATUS", "GENERATIONS", "BEST", "CREATED")]
    rows += [
        (
            r["run_id"],
            r["scenario"],
            "interrupted",
            f"0/{r['target_generations'] or '?'}",
            fmt(None),
            r["created_at"],
        )
        for r in asked
    ]
    rows += [
        (
            r["run_id"],
            r["scenario"],
            r["status"],
            f"{r['generations_completed']}/{r['target_generations']}",
            fmt(r["best_score"]),
            r["created_at"],
        )
        for r in runs
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:  # a header, then columns as wide as their longest cell
        cells = [cell.ljust(width) for cell, width in zip(row, widths)]
        sys.stdout.write("  ".join([*cells, row[-1]]) + "\n")


def register(app: typer.Typer) -> None:
    import typer

    @app.command()
    def status(
        run_id: str = typer.Argument(..., help="Run id (see `lessonloop list`)."),
        as_json: bool = typer.Option(False, "--json", help="Print run-status-v1 JSON."),
    ) -> None:
        """Show a run's state and every generation's score and gate decision."""
        status_command(run_id, as_json)

    @app.command()
    def show(
        run_id: str = typer.Argument(..., help="Run id."),
        generation: int | None = typer.Option(
            None, "--generation", "-g", help="Generation index (default: latest)."
        ),
        best: bool = typer.Option(
            False,
            "--best",
            help="The best strategy: the incumbent, from the latest advance (best_score is its validated score).",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print run-show-v1 JSON."),
    ) -> None:
        """Show one generation: its strategy, scores, gate decisions and analysis."""
        show_command(run_id, generation, best, as_json)

    @app.command(name="list")
    def list_runs(
        as_json: bool = typer.Option(False, "--json", help="Print a JSON list of runs."),
    ) -> None:
        """List runs, newest first."""
        list_command(as_json)

    @app.command()
    def watch(
        run_id: str = typer.Argument(..., help="Run id."),
        ndjson: bool = typer.Option(
            False, "--ndjson", "--json", help="Print raw events, one JSON per line."
        ),
        interval: float = typer.Option(0.25, "--interval", help="Seconds between polls."),
    ) -> None:
        """Follow a run's events while it runs; print what happened so far when it is not running."""
        from ..loop.events import read_events
        from ..loop.runlock import is_active

        with _open_for_run(run_id) as store:
            run, _ = load_run(store, run_id)
        run_dir = paths.run_dir(run_id)
        events_path = run_dir / "events.ndjson"
        offset, last = 0, None
        while True:
            events, offset = read_events(events_path, offset)
            for event in events:
                last = event
                text = (
                    json.dumps(event, sort_keys=True)
                    if ndjson
                    else _describe(event, run["target_generations"])
                )
                if text:
                    sys.stdout.write(text + "\n")
            sys.stdout.flush()
            if events:
                continue
            if not is_active(run_dir):
                events, offset = read_events(events_path, offset)  # written just before unlock
                if events:
                    continue
                if not ndjson and (
                    last is None
                    or not last["event"].startswith("run_")
                    or last["event"] in ("run_started", "run_resumed")
                ):
                    sys.stdout.write(
                        f"run {run_id} is not running (resume it with "
                        f"`lessonloop resume {run_id}`)\n"
                    )
                return
            time.sleep(max(0.01, interval))

    @app.command()
    def export(
        run_id: str = typer.Argument(..., help="Run id."),
        format: str = typer.Option(
            "json",
            "--format",
            help="json (everything) or training-jsonl (prompt/completion of kept generations).",
        ),
        output: str | None = typer.Option(
            None, "--output", "-o", help="Write to a file instead of stdout."
        ),
        as_json: bool = typer.Option(
            False, "--json", help="Errors as JSON (the export itself is always JSON)."
        ),
    ) -> None:
        """Export a run: everything as JSON, or training records of the generations it kept."""
        if format not in ("json", "training-jsonl"):
            raise UsageError(f"unknown export format {format!r}; use json or training-jsonl")
        with _open_for_run(run_id) as store:
            run, gens = load_run(store, run_id)
            if format == "json":
                text = json.dumps(_export_document(store, run, gens), indent=2) + "\n"
            else:
                text = "".join(
                    json.dumps(r, sort_keys=True) + "\n"
                    for r in _training_records(store, run_id, gens)
                )
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


def _export_document(store, run, gens) -> dict:
    from ..store import runs as run_store

    decisions = run_store.gate_decisions(store, run["run_id"])
    document = {"run": run_object(run, gens), "generations": []}
    for g in gens:
        index = g["generation_index"]
        obj = generation_object(g, with_strategy=True)
        obj["gate_decisions"] = [dict(d) for d in decisions if d["generation_index"] == index]
        obj["matches"] = [_match_object(m) for m in run_store.matches(store, run["run_id"], index)]
        obj["role_outputs"] = [dict(o) for o in run_store.role_outputs(store, run["run_id"], index)]
        document["generations"].append(obj)
    return document


def _training_records(store, run_id: str, gens) -> list[dict]:
    """One prompt/completion record per kept (advanced) generation: the competitor call that
    produced the strategy that advanced. Redacted again on the way out."""
    from ..safety.redact import redact
    from ..store import runs as run_store

    records = []
    for g in gens:
        if g["gate_decision"] != "advance":
            continue
        index = g["generation_index"]
        final_attempt = g["attempts"] - 1
        calls = [
            o
            for o in run_store.role_outputs(store, run_id, index)
            if o["role"] == "competitor" and o["attempt"] == final_attempt
        ]
        if not calls:
            continue
        records.append(
            {
                "prompt": redact(calls[-1]["prompt"]),
                "completion": redact(calls[-1]["output"]),
                "run_id": run_id,
                "generation": index,
                "score": g["mean_score"],
                "paired_delta": g["mean_delta"],
            }
        )
    return records


def _is_regular_or_missing(path: str) -> bool:
    """Never write through a symlink, device or directory the user may not have meant."""
    import os
    import stat

    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return True
    return stat.S_ISREG(mode)


def _describe(event: dict, target: int) -> str | None:
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
