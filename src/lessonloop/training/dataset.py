"""A scenario's training data: every stored match of every run of it, as (strategy played,
score), redacted as exports are, with a hash of its content.

The ``matches`` table records a side and a phase, not the strategy; the strategy each side
played is resolved from what the runner stored beside it (``loop/tournament.py``):

- ``screen`` ``candidate:<i>``: the screened candidate ``i`` of that attempt (``screenings``);
- ``train``/``holdout`` ``challenger``: the attempt's chosen screened candidate, or the
  generation's strategy on its final attempt (what the gate judged);
- ``validation`` ``challenger``: the generation's strategy (validated when it advanced);
- ``incumbent`` (any phase): the strategy of the last generation before it that advanced, or
  the one the run started from (``start_incumbent`` in its config: a best-known strategy).

Promotion trials' plays (phase ``trial``: proposals under a bundle, not stored) are not part
of it. A match that failed (an error) or whose strategy cannot be resolved (a retried attempt
that was not screened nor final: its strategy is not stored) is counted in ``skipped``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import canonical

if TYPE_CHECKING:
    from ..store.db import Store


def content_hash(rows: Iterable[Any]) -> str:
    """sha256 of ``rows`` in order, one canonical JSON line each: a training set's data hash."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(canonical.dumps(row).encode())
        digest.update(b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class Example:
    strategy: dict[str, Any]
    score: float


@dataclass
class Dataset:
    scenario: str
    runs: list[str] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)
    skipped: int = 0

    @property
    def data_hash(self) -> str:
        """sha256 of the examples in order (same runs, same matches: same hash)."""
        return content_hash([example.strategy, example.score] for example in self.examples)

    def summary(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "runs": len(self.runs),
            "matches": len(self.examples),
            "strategies": len({canonical.dumps(e.strategy) for e in self.examples}),
            "skipped": self.skipped,
            "data_hash": self.data_hash,
        }


def build(store: Store, scenario: str) -> Dataset:
    """Every stored match of every run of ``scenario`` (oldest run first, in the order played)."""
    from ..store import runs as run_store

    dataset = Dataset(scenario)
    for run in store.query(
        "SELECT run_id, config_json FROM runs WHERE scenario = ? ORDER BY created_at, run_id",
        (scenario,),
    ):
        run_id = run["run_id"]
        dataset.runs.append(run_id)
        config = run_store.loads(run["config_json"])
        start = config.get("start_incumbent") if isinstance(config, dict) else None
        first = start.get("strategy") if isinstance(start, dict) else None
        _add_run(store, run_store, run_id, first if isinstance(first, dict) else None, dataset)
    return dataset


def _add_run(
    store: Store, run_store: Any, run_id: str, start: dict | None, dataset: Dataset
) -> None:
    """Add a run's matches; ``start``: the incumbent it started from (``start_incumbent``)."""
    from ..safety.redact import redact_obj

    generations = {g["generation_index"]: g for g in run_store.generations(store, run_id)}
    screened: dict[tuple[int, int, int], dict] = {}
    chosen: dict[tuple[int, int], dict] = {}
    for row in run_store.screenings(store, run_id):
        strategy = run_store.loads(row["strategy_json"])
        key = (row["generation_index"], row["attempt"])
        screened[(*key, row["candidate"])] = strategy
        if row["chosen"]:
            chosen[key] = strategy
    incumbents: dict[int, dict | None] = {}  # the incumbent each generation played against
    current = start
    for index in sorted(generations):
        incumbents[index] = current
        if generations[index]["gate_decision"] == "advance":
            current = run_store.loads(generations[index]["strategy_json"])
    cleaned: dict[str, dict] = {}  # each strategy redacted once
    for match in store.query(
        "SELECT generation_index, attempt, phase, side, score, error FROM matches "
        "WHERE run_id = ? AND phase != 'trial' ORDER BY id",
        (run_id,),
    ):
        strategy = (
            None if match["error"] else _played(match, generations, screened, chosen, incumbents)
        )
        if not isinstance(strategy, dict):
            dataset.skipped += 1
            continue
        text = canonical.dumps(strategy)
        if text not in cleaned:
            cleaned[text] = redact_obj(strategy)
        dataset.examples.append(Example(cleaned[text], float(match["score"])))


def _played(
    match: Any,
    generations: dict[int, Any],
    screened: dict[tuple[int, int, int], dict],
    chosen: dict[tuple[int, int], dict],
    incumbents: dict[int, dict | None],
) -> dict | None:
    """The strategy a stored match played, or None when it cannot be told."""
    from ..store import runs as run_store

    index, attempt, side = match["generation_index"], match["attempt"], match["side"]
    generation = generations.get(index)
    if side == "incumbent":
        return incumbents.get(index)
    if side.startswith("candidate:"):
        number = side.partition(":")[2]
        return screened.get((index, attempt, int(number))) if number.isdigit() else None
    if side != "challenger" or generation is None:
        return None
    final = run_store.loads(generation["strategy_json"])
    if match["phase"] == "validation":
        return final
    if (index, attempt) in chosen:
        return chosen[index, attempt]
    return final if attempt == generation["attempts"] - 1 else None
