"""Prompt/completion records of kept generations: the ``training-jsonl`` export of a run and
the ``lora`` backend's dataset (every run of a scenario or task) come from this one reader,
so what a model is fine-tuned on is exactly what a user exports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlite3 import Row

    from ..store.db import Store


def run_records(store: Store, run_id: str, generations: list[Row]) -> list[dict[str, Any]]:
    """One prompt/completion record per kept (advanced) generation: the competitor call that
    produced the strategy that advanced. Redacted again on the way out."""
    from ..safety.redact import redact
    from ..store import runs as run_store

    records: list[dict[str, Any]] = []
    for row in generations:
        if row["gate_decision"] != "advance":
            continue
        index = row["generation_index"]
        final_attempt = row["attempts"] - 1
        calls = [
            output
            for output in run_store.role_outputs(store, run_id, index)
            if output["role"] == "competitor" and output["attempt"] == final_attempt
        ]
        if not calls:
            continue
        records.append(
            {
                "prompt": redact(calls[-1]["prompt"]),
                "completion": redact(calls[-1]["output"]),
                "run_id": run_id,
                "generation": index,
                "score": row["mean_score"],
                "paired_delta": row["mean_delta"],
            }
        )
    return records


@dataclass
class Completions:
    """The records of every run of one scenario (or ``task:NAME``), oldest run first."""

    scenario: str
    runs: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def data_hash(self) -> str:
        """sha256 of the (prompt, completion) pairs in order: same kept generations, same hash."""
        from .dataset import content_hash

        return content_hash([record["prompt"], record["completion"]] for record in self.records)

    def summary(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "runs": len(self.runs),
            "records": len(self.records),
            "data_hash": self.data_hash,
        }


def build(store: Store, scenario: str) -> Completions:
    """The kept generations' records of every stored run of ``scenario`` (a scenario's name as
    runs store it, or ``task:NAME``)."""
    from ..store import runs as run_store

    found = Completions(scenario)
    for run in store.query(
        "SELECT run_id FROM runs WHERE scenario = ? ORDER BY created_at, run_id", (scenario,)
    ):
        found.runs.append(run["run_id"])
        generations = run_store.generations(store, run["run_id"])
        found.records.extend(run_records(store, run["run_id"], generations))
    return found
