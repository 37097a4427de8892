"""How the CLI speaks: JSON on stdout, one-line errors on stderr, contract-shaped objects."""

from __future__ import annotations

import json
import sys
from typing import Any


EXECUTOR_MODE = "local"


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


def error_line(message: str, as_json: bool) -> None:
    from ..safety.redact import redact

    message = " ".join(redact(str(message)).split()) or "unknown error"
    if as_json:
        sys.stderr.write(json.dumps({"error": message}) + "\n")
    else:
        sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()


def run_object(run, generations: list, active: bool) -> dict:
    """A run as in run-status-v1 ``$defs/run``, plus lessonloop's own fields.

    A run marked ``running`` whose process is gone (no one holds its lock) is reported as
    ``interrupted``, so a crash does not look like progress.
    """
    from ..store.runs import best_score as best_of

    best_score = best_of(generations)
    status, reason = run["status"], run["stop_reason"]
    if status == "running" and not active:
        status, reason = "interrupted", "the process running it is gone; resume it to continue"
    return {
        "run_id": run["run_id"],
        "scenario": run["scenario"],
        "target_generations": run["target_generations"],
        "executor_mode": EXECUTOR_MODE,
        "status": status,
        "agent_provider": run["provider"],
        "created_at": run["created_at"],
        "updated_at": run["updated_at"],
        "scenario_ref": run["scenario_ref"],
        "seed": run["seed"],
        "stop_reason": reason,
        "generations_completed": len(generations),
        "best_score": best_score,
        "current_elo": generations[-1]["elo"] if generations else None,
    }


def generation_object(g, *, with_strategy: bool = False) -> dict:
    """A generation as in run-status-v1 ``$defs/generation``, plus lessonloop's own fields."""
    from ..store.runs import loads

    obj = {
        "generation_index": g["generation_index"],
        "mean_score": g["mean_score"],
        "best_score": g["best_score"],
        "elo": g["elo"],
        "wins": g["wins"],
        "losses": g["losses"],
        "gate_decision": g["gate_decision"],
        "status": g["status"],
        "duration_seconds": g["duration_seconds"],
        "evaluator_epoch": g["evaluator_epoch"],
        "quarantined": g["quarantined"],
        "created_at": g["created_at"],
        "updated_at": g["updated_at"],
        "ties": g["ties"],
        "attempts": g["attempts"],
        "incumbent_score": g["incumbent_score"],
        "mean_delta": g["mean_delta"],
        "dimensions": loads(g["dimensions_json"]),
    }
    if with_strategy:
        obj["strategy"] = loads(g["strategy_json"])
        obj["context"] = loads(g["context_json"])
        obj["analysis"] = g["analysis"]
    return obj


def fmt(value: float | None, spec: str = ".4f") -> str:
    return "n/a" if value is None else format(value, spec)


def generation_line(g: dict, target: int | None = None) -> str:
    """One human line per generation, shared by run progress, status and watch."""
    index = g.get("generation_index", g.get("generation"))
    of = f"/{target}" if target else ""
    return (
        f"gen {index}{of}  score {fmt(g.get('mean_score'))}  "
        f"delta {fmt(g.get('mean_delta'), '+.4f'):>8}  {g.get('gate_decision', ''):<8}  "
        f"elo {fmt(g.get('elo'), '.1f')}  best {fmt(g.get('best_score'))}"
    )
