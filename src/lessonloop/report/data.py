"""What a run's HTML report shows, read from the store into plain values (JSON-ready).

Everything comes from the database, which holds only redacted text, so the page can be
rebuilt at any time (``lessonloop report``) and shows what ``status``, ``show`` and
``report.md`` show, plus the charts' series. The matches table is only counted, never loaded:
a 300-generation run has tens of thousands of them and the page needs none.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ..knowledge.entries import active, scenario_scope
from ..store import runs as run_store
from ..store.db import Store

LIST_MAX = 200  # entries shown per knowledge list; the rest are counted
TASK_KIND = "task"


@dataclass
class RunReport:
    """One run as the page shows it."""

    run: dict[str, Any]
    settings: dict[str, Any]  # the run's options, nested keys flattened to "a.b"
    generations: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    best: dict[str, Any] | None
    knowledge: dict[str, Any]
    usage: dict[str, Any]
    validated: bool  # the generations carry validated scores (scenario runs since migration 8)
    # the context bundles the run's coach edits made, with their trials and decisions (issue 23)
    promotions: list[dict[str, Any]] = field(default_factory=list)
    # an evolve run's candidates or a mission's steps as their own tables hold them (kind_page)
    details: dict[str, Any] | None = None

    @property
    def is_task(self) -> bool:
        return bool(self.run["kind"] == TASK_KIND)


def flatten(value: object, prefix: str = "") -> dict[str, Any]:
    """Nested settings as one level of dotted keys, so two runs line up key by key."""
    if isinstance(value, dict) and value:
        flat: dict[str, Any] = {}
        for key in sorted(value):
            flat.update(flatten(value[key], f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix or "value": value}


def _column(row: sqlite3.Row, key: str) -> Any:
    try:
        return row[key]
    except (IndexError, KeyError):
        return None


def run_fields(run: sqlite3.Row) -> dict[str, Any]:
    return {
        "run_id": run["run_id"],
        "scenario": run["scenario"],
        "scenario_ref": run["scenario_ref"],
        "kind": _column(run, "kind") or "scenario",
        "status": run["status"],
        "stop_reason": run["stop_reason"],
        "provider": run["provider"],
        "seed": run["seed"],
        "target_generations": run["target_generations"],
        "created_at": run["created_at"],
        "updated_at": run["updated_at"],
    }


def generation_fields(row: sqlite3.Row, final_rationale: str, is_task: bool) -> dict[str, Any]:
    """A generation as the charts and tables read it; a task round keeps its output and the
    verifier's or judge's feedback (its analysis)."""
    strategy = run_store.loads(row["strategy_json"])
    fields = {
        "generation": row["generation_index"],
        "tournament": row["mean_score"],
        "validated": _column(row, "validated_score"),
        "best": row["best_score"],
        "incumbent": row["incumbent_score"],
        "mean_delta": row["mean_delta"],
        "elo": row["elo"],
        "wins": row["wins"],
        "losses": row["losses"],
        "ties": row["ties"],
        "attempts": row["attempts"],
        "decision": row["gate_decision"],
        "rationale": final_rationale,
        "dimensions": run_store.loads(row["dimensions_json"]) or {},
        "duration_seconds": row["duration_seconds"],
    }
    if is_task:
        fields["output"] = (strategy or {}).get("output", "") if isinstance(strategy, dict) else ""
        fields["feedback"] = row["analysis"]
    return fields


def decision_fields(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "generation": row["generation_index"],
        "attempt": row["attempt"],
        "decision": row["decision"],
        "rationale": row["rationale"],
        "mean_delta": row["mean_delta"],
        "wins": row["wins"],
        "losses": row["losses"],
        "pairs": _column(row, "pairs"),
        "lower_bound": _column(row, "lower_bound"),
        "holdout_delta": row["holdout_delta"],
    }


def best_fields(rows: list[sqlite3.Row], config: dict[str, Any]) -> dict[str, Any] | None:
    """The run's best strategy (``store.runs.best_generation``) with its scores; when none
    of its own advanced, the incumbent it started from (``start_incumbent``), which is then
    still its best (its validated score is that strategy's)."""
    chosen = run_store.best_generation(rows)
    validated = rows[-1]["best_score"] if run_store.validated(rows) else None
    if chosen is not None:
        return {
            "generation": chosen["generation_index"],
            "strategy": run_store.loads(chosen["strategy_json"]),
            "tournament": chosen["mean_score"],
            "validated": validated,
            "carried_from": None,
        }
    start = config.get("start_incumbent") if isinstance(config, dict) else None
    if not isinstance(start, dict) or not isinstance(start.get("strategy"), dict):
        return None
    return {
        "generation": None,
        "strategy": start["strategy"],
        "tournament": start.get("score"),
        "validated": validated,
        "carried_from": {"run_id": start.get("from_run"), "generation": start.get("generation")},
    }


def knowledge_scope(store: Store, run: dict[str, Any], config: dict[str, Any]) -> str:
    """Where this run's lessons live: its scenario's scope, or for a task run the scope its
    entries were written to (else the task's own, from the spec stored with the run)."""
    if run["kind"] != TASK_KIND:
        return scenario_scope(run["scenario"])
    row = store.query_one(
        "SELECT k.scope FROM knowledge_provenance AS p JOIN knowledge AS k "
        "ON k.id = p.knowledge_id WHERE p.run_id = ? LIMIT 1",
        (run["run_id"],),
    )
    if row is not None:
        scope: str = row["scope"]
        return scope
    from ..tasks.spec import parse  # pydantic: only for a task run that wrote nothing yet

    return f"task:{parse(config['task'], 'the task stored with the run').slug}"


def knowledge_fields(store: Store, run: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The scope's active playbook, hints and dead ends, most useful first, each with its
    evidence counts and whether this run wrote or confirmed it."""
    from ..knowledge.entries import ranked

    scope = knowledge_scope(store, run, config)
    entries = ranked(active(store, scope, ("bullet", "hint", "dead_end")))
    mine = {
        row["knowledge_id"]
        for row in store.query(
            "SELECT DISTINCT knowledge_id FROM knowledge_provenance WHERE run_id = ?",
            (run["run_id"],),
        )
    }
    lists: dict[str, Any] = {"scope": scope}
    for kind, name in (("bullet", "playbook"), ("hint", "hints"), ("dead_end", "dead_ends")):
        chosen = [e for e in entries if e.kind == kind]
        if kind == "dead_end":  # most recent first: their counts stay at zero
            chosen.sort(key=lambda e: -e.id)
        lists[name] = [
            {
                "id": e.id,
                "summary": e.summary,
                "content": e.content if e.content != e.summary else "",
                "helpful": e.helpful,
                "harmful": e.harmful,
                "seen": e.seen,
                "from_run": e.id in mine,
            }
            for e in chosen[:LIST_MAX]
        ]
        lists[f"{name}_hidden"] = max(0, len(chosen) - LIST_MAX)
    return lists


def usage_fields(store: Store, run_id: str) -> dict[str, Any]:
    """Provider calls, tokens, cost and latency per role, and the matches played per phase."""
    roles = [
        dict(row)
        for row in store.query(
            "SELECT role, COALESCE(SUM(calls), 0) AS calls, COALESCE(SUM(retries), 0) AS retries, "
            "COALESCE(SUM(input_tokens), 0) AS input_tokens, "
            "COALESCE(SUM(output_tokens), 0) AS output_tokens, COALESCE(SUM(cost), 0) AS cost, "
            "COALESCE(SUM(latency_ms), 0) AS latency_ms FROM provider_calls WHERE run_id = ? "
            "GROUP BY role ORDER BY role",
            (run_id,),
        )
    ]
    totals = {
        key: sum(role[key] for role in roles)
        for key in ("calls", "retries", "input_tokens", "output_tokens", "cost", "latency_ms")
    }
    plays: dict[str, int] = {
        row["phase"]: row["played"]
        for row in store.query(
            "SELECT phase, COUNT(*) AS played FROM matches WHERE run_id = ? GROUP BY phase "
            "ORDER BY phase",
            (run_id,),
        )
    }
    return {"roles": roles, "totals": totals, "plays": plays, "plays_total": sum(plays.values())}


def collect(store: Store, run_id: str) -> RunReport:
    """Everything the page shows (NotFoundError for an unknown run id)."""
    run_row = run_store.get_run(store, run_id)
    run = run_fields(run_row)
    rows = run_store.generations(store, run_id)
    decision_rows = [decision_fields(d) for d in run_store.gate_decisions(store, run_id)]
    last_rationale = {d["generation"]: d["rationale"] for d in decision_rows}
    is_task = run["kind"] == TASK_KIND
    config = run_store.loads(run_row["config_json"]) or {}
    shown = {k: v for k, v in config.items() if not (is_task and k == "task")}
    return RunReport(
        run=run,
        settings=flatten(shown),  # a task's spec is its file's business
        generations=[
            generation_fields(g, last_rationale.get(g["generation_index"], ""), is_task)
            for g in rows
        ],
        decisions=decision_rows,
        best=best_fields(rows, config),
        knowledge=knowledge_fields(store, run, config),
        usage=usage_fields(store, run_id),
        validated=run_store.validated(rows),
        promotions=promotion_fields(store, run_id),
        details=kind_details(store, run_id, run["kind"]),
    )


def kind_details(store: Store, run_id: str, kind: str) -> dict[str, Any] | None:
    from .kind_page import details

    return details(store, run_id, kind)


def promotion_fields(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The run's promotion candidates, oldest first, each with its decisions and trial counts."""
    from ..promotion import records

    return sorted(records.listing(store.conn, run_id=run_id), key=lambda c: c["id"])
