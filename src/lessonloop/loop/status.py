"""A run as the documents users and agents read: the run-status-v1 run and generation objects
behind ``status --json``, ``show --json``, ``list --json`` and the MCP run tools.

The store is imported where it is used: the CLI loads this module for every command."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import paths

if TYPE_CHECKING:
    from sqlite3 import Row

    from ..store.db import Store

EXECUTOR_MODE = "local"


def load_run(store: Store, run_id: str) -> tuple[Row, list[Row]]:
    """The run row (NotFoundError for an unknown id) and its completed generations."""
    from ..store import runs as run_store

    return run_store.get_run(store, run_id), run_store.generations(store, run_id)


def run_object(run: Row, generations: list[Row]) -> dict[str, Any]:
    """A run as in run-status-v1 ``$defs/run``, plus lessonloop's own fields.

    A run marked ``running`` whose process is gone (no one holds its lock) is reported as
    ``interrupted``, so a crash does not look like progress.
    """
    from ..store.runs import best_score as best_of
    from ..store.runs import tournament_score
    from .runlock import is_active

    best_score = best_of(generations)
    status, reason = run["status"], run["stop_reason"]
    if status == "running" and not is_active(paths.run_dir(run["run_id"])):
        status, reason = "interrupted", "the process running it is gone; resume it to continue"
    return {
        "run_id": run["run_id"],
        "kind": run["kind"],  # scenario, task (improve), evolve or mission
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
        "tournament_score": tournament_score(generations),
        "current_elo": generations[-1]["elo"] if generations else None,
    }


def generation_object(row: Row, *, with_strategy: bool = False) -> dict[str, Any]:
    """A generation as in run-status-v1 ``$defs/generation``, plus lessonloop's own fields."""
    from ..store.runs import loads

    obj = {
        "generation_index": row["generation_index"],
        "mean_score": row["mean_score"],
        "best_score": row["best_score"],
        "elo": row["elo"],
        "wins": row["wins"],
        "losses": row["losses"],
        "gate_decision": row["gate_decision"],
        "status": row["status"],
        "duration_seconds": row["duration_seconds"],
        "evaluator_epoch": row["evaluator_epoch"],
        "quarantined": row["quarantined"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "ties": row["ties"],
        "attempts": row["attempts"],
        "incumbent_score": row["incumbent_score"],
        "mean_delta": row["mean_delta"],
        "validated_score": row["validated_score"] if "validated_score" in row.keys() else None,
        "dimensions": loads(row["dimensions_json"]),
    }
    if with_strategy:
        obj["strategy"] = loads(row["strategy_json"])
        obj["context"] = loads(row["context_json"])
        obj["analysis"] = row["analysis"]
    return obj


def status_document(run: Row, gens: list[Row]) -> dict[str, Any]:
    """``status --json`` (run-status-v1 plus the generations); the MCP run_status tool too."""
    run_obj = run_object(run, gens)
    return {
        "run": run_obj,
        "latest_generation": generation_object(gens[-1]) if gens else None,
        "runtime_session": None,
        "progress_report": {
            "generations_completed": len(gens),
            "target_generations": run["target_generations"],
            "percent": round(100 * len(gens) / max(1, run["target_generations"]), 1),
            "best_score": run_obj["best_score"],
            "tournament_score": run_obj["tournament_score"],
            "current_elo": run_obj["current_elo"],
        },
        "generations": [generation_object(g) for g in gens],
    }
