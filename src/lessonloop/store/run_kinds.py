"""Evolve runs and missions as runs like any other: their ``runs`` row (kind ``evolve`` or
``mission``) and a ``generations`` row (with its gate decision) per finished candidate or
step, derived from their own tables (migrations 17 and 18) by the one mapping below.

The evolve and mission stores call ``sync_evolve`` / ``sync_mission`` inside the transaction of
each of their writes, so the derived rows can never disagree with the rows they come from;
migration 19 calls them once for the runs stored before. What each generation field means for
each kind is in ``MEANINGS`` (``status``/``show`` print it with the run)."""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import canonical
from ..errors import UsageError

if TYPE_CHECKING:
    from .db import Store

EVOLVE, MISSION = "evolve", "mission"
KINDS = (EVOLVE, MISSION)
NO_ELO = 0.0  # the column needs a number: neither kind plays rated matches
SCENARIO_NAME = 60  # characters of a mission's goal in its run's ``scenario`` name

MEANINGS: dict[str, dict[str, str]] = {
    EVOLVE: {
        "generation_index": "the candidate's number (the baseline, 0, is not a generation)",
        "strategy": "the candidate's parameter values",
        "mean_score": "the candidate's estimated speed-up over the baseline (its paired "
        "speed-up against the champion of the time, chained to the baseline); 0 when it was "
        "wrong, crashed or refused (not timed)",
        "incumbent_score": "the speed-up over the baseline of the champion it was timed against",
        "mean_delta": "the mean paired log-ratio of times, champion over candidate (> 0: faster)",
        "best_score": "the speed-up over the baseline of the champion after this candidate "
        "(1.0: still the baseline): once the run has confirmed its champion against the "
        "baseline on fresh pairs, that confirmation's speed-up; validated_score is the same",
        "gate_decision": "champion (faster at the stated confidence, twice), rejected (correct "
        "but not faster), wrong (failed the correctness check), crashed, or refused (its "
        "source no longer matched its receipt)",
        "wins": "timing pairs in which the candidate was faster than the champion",
        "losses": "timing pairs in which the champion was faster",
        "quarantined": "1 when the candidate crashed while timed",
        "evaluator_epoch": "the digest of the spec it was measured under",
        "elo": "not used (0)",
        "dimensions": "speedup_vs_champion and its one-sided lower bound, correct (1/0)",
    },
    MISSION: {
        "generation_index": "the step's number",
        "strategy": "what the model proposed: kind (patch, file, command, invalid) and text",
        "mean_score": "1 when the verifier passed after this step, else 0",
        "best_score": "1 once the verifier has passed (the mission succeeded), else 0; "
        "validated_score is the same",
        "incumbent_score": "not used (null)",
        "mean_delta": "not used (null)",
        "gate_decision": "verified (the verifier exited 0), failed (it ran and did not pass), "
        "refused (the change was refused: path or command not allowed), not_applied (the "
        "answer was no change, or the patch did not apply), undone (applied, then put back: "
        "the verifier's outcome got worse or did not change)",
        "wins": "not used (0)",
        "losses": "not used (0)",
        "evaluator_epoch": "not used (null)",
        "elo": "not used (0)",
        "dimensions": "applied (1/0), verifier_passed (1/0, when it ran), calls (model calls)",
        "analysis": "what the step did, then the verifier's exit and its redacted output",
    },
}


def _rows(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
    """Rows by column name whatever the connection's row factory (a migration's may have none)."""
    cursor = conn.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(sql, params).fetchall()


def _row(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> sqlite3.Row | None:
    found = _rows(conn, sql, params)
    return found[0] if found else None


def _seconds(start: str | None, end: str | None) -> float:
    """Seconds between two stored UTC stamps (0 when either is missing)."""
    if not start or not end:
        return 0.0
    try:
        first = datetime.fromisoformat(start.replace("Z", "+00:00"))
        last = datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return round(max(0.0, (last - first).total_seconds()), 4)


def _claim(conn: sqlite3.Connection, run_id: str, kind: str) -> bool:
    """Whether ``run_id``'s runs row is free or this kind's; a run of another kind with the
    same id is refused (the caller's transaction is rolled back)."""
    row = conn.execute("SELECT kind FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if row is not None and row[0] != kind:
        raise UsageError(
            f"run id {run_id!r} is taken by a {row[0]} run: choose another --run-id",
            field="run_id",
        )
    return row is None


def _upsert_run(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    """Insert the run's row, or update what changes (the provider, once set, is kept)."""
    conn.execute(
        "INSERT INTO runs (run_id, scenario, scenario_ref, target_generations, status, provider, "
        "seed, config_json, stop_reason, created_at, updated_at, kind) "
        "VALUES (:run_id, :scenario, :scenario_ref, :target_generations, :status, :provider, "
        ":seed, :config_json, :stop_reason, :created_at, :updated_at, :kind) "
        "ON CONFLICT (run_id) DO UPDATE SET scenario = excluded.scenario, "
        "scenario_ref = excluded.scenario_ref, target_generations = excluded.target_generations, "
        "status = excluded.status, config_json = excluded.config_json, "
        "stop_reason = excluded.stop_reason, updated_at = excluded.updated_at",
        values,
    )


def _put_generation(conn: sqlite3.Connection, generation: dict[str, Any], gate: dict) -> None:
    """Replace one generation's row and its gate decision (a step or candidate is final once
    it is stored; the replace makes a repeated sync harmless)."""
    run_id, index = generation["run_id"], generation["generation_index"]
    conn.execute(
        "DELETE FROM generations WHERE run_id = ? AND generation_index = ?", (run_id, index)
    )
    conn.execute(
        "DELETE FROM gate_decisions WHERE run_id = ? AND generation_index = ?", (run_id, index)
    )
    names = list(generation)
    conn.execute(
        f"INSERT INTO generations ({', '.join(names)}) "
        f"VALUES ({', '.join(':' + name for name in names)})",
        generation,
    )
    conn.execute(
        "INSERT INTO gate_decisions (run_id, generation_index, attempt, decision, rationale, "
        "mean_delta, wins, losses, created_at, pairs, lower_bound) "
        "VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            index,
            generation["gate_decision"],
            gate["rationale"],
            generation["mean_delta"],
            generation["wins"],
            generation["losses"],
            generation["updated_at"],
            gate.get("pairs"),
            gate.get("lower_bound"),
        ),
    )


def _generation(
    run_id: str, index: int, created_at: str, updated_at: str, duration: float
) -> dict[str, Any]:
    """A generation row's fields that neither kind uses, at their neutral values."""
    return {
        "run_id": run_id,
        "generation_index": index,
        "status": "completed",
        "attempts": 1,
        "elo": NO_ELO,
        "wins": 0,
        "losses": 0,
        "ties": 0,
        "quarantined": 0,
        "evaluator_epoch": None,
        "incumbent_score": None,
        "mean_delta": None,
        "duration_seconds": duration,
        "created_at": created_at,
        "updated_at": updated_at,
    }


# -- evolve -------------------------------------------------------------------------------------
EVOLVE_DECISIONS = {
    "champion": "champion",
    "not faster": "rejected",
    "incorrect": "wrong",
    "crashed": "crashed",
    "refused": "refused",
}


def _gain(value: float | None) -> float | None:
    return None if value is None else math.exp(value)


def _confirmed(conn: sqlite3.Connection, run_id: str, champion: dict) -> float:
    """The champion's speed-up over the baseline: measured on its confirmation's fresh pairs
    once it has them (the chained per-generation estimate flatters, as a maximum of noisy
    measures does), else that estimate."""
    pairs = conn.execute(
        "SELECT time_a, time_b FROM evolve_pairs WHERE run_id = ? AND candidate_index = ? "
        "AND phase = 'confirm'",
        (run_id, champion["candidate_index"]),
    ).fetchall()
    if not pairs:
        return _gain(champion["log_gain_vs_baseline"]) or 1.0
    logs = [_log_gain(a, b, _direction(champion)) for a, b in pairs]
    return math.exp(sum(logs) / len(logs))


def _direction(candidate: dict) -> str:
    """Whether lower (a cost, the default) or higher is better, as its decision recorded."""
    stats = json.loads(candidate["stats_json"]) if candidate["stats_json"] else {}
    return str(stats.get("direction", "lower"))


def _log_gain(champion: float, candidate: float, direction: str) -> float:
    """How much better the candidate measured in one pair, as a log ratio (> 0: better)."""
    gain = math.log(max(champion, 1e-12)) - math.log(max(candidate, 1e-12))
    return -gain if direction == "higher" else gain


def sync_evolve(conn: sqlite3.Connection, run_id: str, index: int | None = None) -> None:
    """The evolve run's ``runs`` row, and the generation of its candidate ``index`` (every
    finished candidate when None)."""
    run = _row(conn, "SELECT * FROM evolve_runs WHERE run_id = ?", (run_id,))
    if run is None:
        return
    _claim(conn, run_id, EVOLVE)
    _upsert_run(
        conn,
        {
            "run_id": run_id,
            "scenario": f"evolve:{run['name']}",
            "scenario_ref": run["spec_path"],
            "target_generations": run["target_generations"],
            "status": run["status"],
            "provider": "local",  # on insert; create_run sets who writes the candidates
            "seed": run["seed"],
            "config_json": canonical.dumps(
                {
                    "kind": EVOLVE,
                    "spec": run["spec_path"],
                    "spec_digest": run["spec_digest"],
                    "source_digest": run["source_digest"],
                }
            ),
            "stop_reason": run["stop_reason"],
            "created_at": run["created_at"],
            "updated_at": run["updated_at"],
            "kind": EVOLVE,
        },
    )
    if index == 0:
        return
    rows = [
        dict(row)
        for row in _rows(
            conn,
            "SELECT * FROM evolve_candidates WHERE run_id = ? ORDER BY candidate_index",
            (run_id,),
        )
    ]
    for candidate in rows:
        position = candidate["candidate_index"]
        if position == 0 or candidate["status"] == "received":
            continue
        if index is None or position == index:
            _put_evolve_generation(conn, run_id, candidate, rows)


def _champion_before(rows: list[dict], position: int, inclusive: bool) -> dict | None:
    kept = [
        row
        for row in rows
        if row["champion"]
        and (row["candidate_index"] <= position if inclusive else row["candidate_index"] < position)
    ]
    return kept[-1] if kept else None


def _put_evolve_generation(
    conn: sqlite3.Connection, run_id: str, candidate: dict, rows: list[dict]
) -> None:
    position = candidate["candidate_index"]
    stats = json.loads(candidate["stats_json"]) if candidate["stats_json"] else None
    against = next(
        (row for row in rows if row["candidate_index"] == candidate["against_index"]), None
    ) or _champion_before(rows, position, inclusive=False)
    after = _champion_before(rows, position, inclusive=True)
    best = _confirmed(conn, run_id, after) if after is not None else 1.0
    timed = candidate["speedup"] is not None and candidate["correct"]
    pairs = conn.execute(
        "SELECT time_a, time_b FROM evolve_pairs WHERE run_id = ? AND candidate_index = ? "
        "AND phase = 'gate' ORDER BY id",
        (run_id, position),
    ).fetchall()
    decision = EVOLVE_DECISIONS.get(candidate["status"], candidate["status"])
    dimensions: dict[str, float] = {}
    if candidate["correct"] is not None:
        dimensions["correct"] = float(bool(candidate["correct"]))
    if candidate["speedup"] is not None:
        dimensions["speedup_vs_champion"] = candidate["speedup"]
    if candidate["speedup_lower_bound"] is not None:
        dimensions["speedup_lower_bound"] = candidate["speedup_lower_bound"]
    mean_delta = math.log(candidate["speedup"]) if timed and candidate["speedup"] > 0 else None
    bound = candidate["speedup_lower_bound"]
    if timed and stats:
        rationale = (
            f"{candidate['speedup']:.3f}x the speed of generation {candidate['against_index']} "
            f"(one-sided {stats.get('confidence', 0.95):.0%} lower bound "
            f"{bound or 0.0:.3f}x, {stats.get('pairs')} pairs)"
        )
    else:
        rationale = candidate["message"] or decision
    generation = _generation(
        run_id,
        position,
        candidate["created_at"],
        candidate["updated_at"],
        _seconds(candidate["created_at"], candidate["updated_at"]),
    )
    generation.update(
        strategy_json=canonical.dumps(json.loads(candidate["params_json"])),
        mean_score=(_gain(candidate["log_gain_vs_baseline"]) or 0.0) if timed else 0.0,
        incumbent_score=(_gain(against["log_gain_vs_baseline"]) if against is not None else None),
        mean_delta=mean_delta,
        best_score=best,
        validated_score=best,
        wins=sum(1 for a, b in pairs if _log_gain(a, b, _direction(candidate)) > 0),
        losses=sum(1 for a, b in pairs if _log_gain(a, b, _direction(candidate)) < 0),
        ties=sum(1 for a, b in pairs if b == a),
        quarantined=int(candidate["status"] == "crashed"),
        gate_decision=decision,
        evaluator_epoch=candidate["spec_digest"],
        dimensions_json=canonical.dumps(dimensions),
        context_json=canonical.dumps(
            {
                "kind": EVOLVE,
                "against": candidate["against_index"],
                "receipt": {
                    "source_digest": candidate["source_digest"],
                    "spec_digest": candidate["spec_digest"],
                    "source": candidate["source_path"],
                },
                "stats": stats,
            }
        ),
        analysis=f"{candidate['status']}: {candidate['message'] or ''}".strip(),
    )
    lower = math.log(bound) if bound else None
    _put_generation(
        conn,
        generation,
        {"rationale": rationale, "pairs": len(pairs) or None, "lower_bound": lower},
    )


# -- missions -----------------------------------------------------------------------------------
def mission_decision(step: dict) -> str:
    if step["refused"]:
        return "refused"
    if not step["applied"]:  # undone: tried, the verifier ran, and the workspace put back
        return "not_applied" if step["verifier_exit"] is None else "undone"
    return "verified" if step["verifier_exit"] == 0 else "failed"


def sync_mission(conn: sqlite3.Connection, run_id: str, index: int | None = None) -> None:
    """The mission's ``runs`` row, and the generation of its step ``index`` (every step when
    None)."""
    mission = _row(conn, "SELECT * FROM missions WHERE run_id = ?", (run_id,))
    if mission is None:
        return
    _claim(conn, run_id, MISSION)
    goal = " ".join(mission["goal"].split())
    if len(goal) > SCENARIO_NAME:
        goal = goal[: SCENARIO_NAME - 3] + "..."
    _upsert_run(
        conn,
        {
            "run_id": run_id,
            "scenario": f"mission:{goal}",
            "scenario_ref": mission["source_dir"],
            "target_generations": mission["max_steps"],
            "status": mission["status"],
            "provider": "model",
            "seed": 0,
            "config_json": canonical.dumps(
                {
                    "kind": MISSION,
                    "goal": mission["goal"],
                    "verifier": mission["verifier"],
                    "workspace_of": mission["source_dir"],
                    "allow": json.loads(mission["allow_json"]),
                    "max_steps": mission["max_steps"],
                    "max_calls": mission["max_calls"],
                }
            ),
            "stop_reason": mission["stop_reason"],
            "created_at": mission["created_at"],
            "updated_at": mission["updated_at"],
            "kind": MISSION,
        },
    )
    if index == 0:
        return
    steps = [
        dict(row)
        for row in _rows(
            conn, "SELECT * FROM mission_steps WHERE run_id = ? ORDER BY step_index", (run_id,)
        )
    ]
    previous = mission["created_at"]
    passed = False
    for step in steps:
        passed = passed or (bool(step["applied"]) and step["verifier_exit"] == 0)
        if index is None or step["step_index"] == index:
            _put_mission_generation(conn, run_id, step, previous, passed)
        previous = step["created_at"]


def _put_mission_generation(
    conn: sqlite3.Connection, run_id: str, step: dict, previous: str, passed: bool
) -> None:
    decision = mission_decision(step)
    ran = step["verifier_output"] is not None
    dimensions = {"applied": float(bool(step["applied"])), "calls": float(step["calls"])}
    if ran:
        dimensions["verifier_passed"] = float(step["verifier_exit"] == 0)
    analysis = step["message"]
    if ran:
        exit_text = "killed" if step["verifier_exit"] is None else str(step["verifier_exit"])
        analysis += f"\n\nverifier exit {exit_text}:\n{step['verifier_output']}"
    generation = _generation(
        run_id, step["step_index"], step["created_at"], step["created_at"],
        _seconds(previous, step["created_at"]),
    )  # fmt: skip
    best = 1.0 if passed else 0.0
    generation.update(
        strategy_json=canonical.dumps({"kind": step["kind"], "proposal": step["proposal"]}),
        mean_score=1.0 if decision == "verified" else 0.0,
        best_score=best,
        validated_score=best,
        gate_decision=decision,
        dimensions_json=canonical.dumps(dimensions),
        context_json=canonical.dumps(
            {
                "kind": MISSION,
                "applied": bool(step["applied"]),
                "refused": bool(step["refused"]),
                "verifier_exit": step["verifier_exit"],
                "calls": step["calls"],
            }
        ),
        analysis=analysis,
    )
    exit_note = (
        ""
        if not ran
        else f"; verifier exit {'killed' if step['verifier_exit'] is None else step['verifier_exit']}"
    )
    _put_generation(conn, generation, {"rationale": step["message"] + exit_note})


def backfill(conn: sqlite3.Connection) -> None:
    """Derive the rows of every evolve run and mission stored so far (migration 19). A run
    whose id a run of another kind already holds keeps its own tables only."""
    for table, sync in (("evolve_runs", sync_evolve), ("missions", sync_mission)):
        for (run_id,) in conn.execute(f"SELECT run_id FROM {table}").fetchall():
            try:
                sync(conn, run_id)
            except UsageError:
                continue


def set_provider(store: Store, run_id: str, provider: str) -> None:
    """A mission's ``agent_provider``: the provider its steps are asked of."""
    with store.transaction() as conn:
        put_provider(conn, run_id, provider)


def put_provider(conn: sqlite3.Connection, run_id: str, provider: str) -> None:
    """An evolve run's or mission's ``agent_provider`` (their own tables do not keep it; a
    derived update leaves it as set here), in the caller's transaction."""
    conn.execute(
        "UPDATE runs SET provider = ? WHERE run_id = ? AND kind IN (?, ?)",
        (provider, run_id, EVOLVE, MISSION),
    )
