"""Training and the model registry, reached by the user: ``lessonloop train`` and ``lessonloop
models ...`` call these. ``training/`` builds the dataset, fits and registers; the checkpoint
is then trialled through the promotion gate against the scope's current competitor and served
(the active pointer of role ``competitor``) only when the gate accepts it."""

from __future__ import annotations

import time
from typing import Any

from .. import paths
from ..errors import NotFoundError, UsageError
from .promotion import settle_verdict
from .stores import reading, writing

BACKENDS = ("surrogate",)
ROLE = "competitor"


def _scenario(name: str) -> Any:
    from ..scenarios import registry

    text = name.strip()
    if text.startswith("task:"):
        raise UsageError(
            "task training needs the lora backend, which is not available yet; train a "
            "scenario with --backend surrogate",
            field="scenario",
        )
    return registry.load(text.removeprefix("scenario:"))


def _scope(scenario: Any) -> str:
    from ..knowledge.entries import scenario_scope

    return scenario_scope(scenario.name)


def train(name: str, backend: str = "surrogate") -> dict[str, Any]:
    """Build ``name``'s dataset from every stored match, fit a ``backend`` model, register the
    checkpoint, trial it against the current competitor and activate it if the gate accepts.
    Returns the checkpoint, the dataset summary, the verdict and the timings."""
    from ..promotion import records
    from ..training import dataset as datasets
    from ..training import registry, surrogate, trial

    if backend not in BACKENDS:
        raise UsageError(
            f"is one of {', '.join(BACKENDS)}, not {backend!r} (lora is not available yet)",
            field="backend",
        )
    scenario = _scenario(name)
    scope = _scope(scenario)
    started = time.perf_counter()
    with reading(paths.home()) as store:
        data = datasets.build(store, scenario.name) if store is not None else None
    if data is None or not data.examples:
        raise NotFoundError(
            f"no stored matches of {scenario.name} to train on: run it first "
            f"(`lessonloop run {scenario.name}`)"
        )
    try:
        params, metrics = surrogate.train(data, scenario.strategy_schema)
    except surrogate.NotEnoughData as exc:
        raise NotFoundError(f"{exc}: run it first (`lessonloop run {scenario.name}`)") from None
    fitted = time.perf_counter()
    with writing(paths.home()) as store, store.transaction() as conn:
        ident, new = registry.register(
            conn,
            scope,
            backend,
            surrogate.BASE,
            [ROLE],
            data.data_hash,
            metrics,
            params,
        )
        incumbent_ref, incumbent = trial.current_competitor(store, scenario, scope)
    verdict, plays = trial.judge(
        scenario,
        ident,
        trial.checkpoint_proposer({"params": params}, scenario),
        incumbent_ref,
        incumbent,
    )
    # the candidate, its trials and the decision in one transaction: a kill during the trials
    # leaves no candidate pending (the checkpoint stays registered; training again trials it)
    with writing(paths.home()) as store, store.transaction() as conn:
        candidate_id = records.add_candidate(
            conn, scope, ROLE, "checkpoint", ident, "train", incumbent_ref=incumbent_ref
        )
        settled = settle_verdict(store, candidate_id, verdict)
        active = records.active(conn, scope, ROLE)
    return {
        "checkpoint": {
            "id": ident,
            "new": new,
            "scope": scope,
            "backend": backend,
            "base": surrogate.BASE,
            "metrics": metrics,
        },
        "dataset": data.summary(),
        "promotion": {
            "candidate_id": candidate_id,
            "incumbent": incumbent_ref,
            "decision": verdict.decision,
            "stage": verdict.stage,
            "statistic": verdict.statistic,
            "rationale": verdict.rationale,
            "trials": len(verdict.trials),
            "plays": plays,
            "activated": settled["activated"],
            "held": settled["held"],
        },
        "active": active,
        "seconds": {
            "dataset_and_fit": round(fitted - started, 3),
            "total": round(time.perf_counter() - started, 3),
        },
    }


def _unknown(ident: str) -> NotFoundError:
    return NotFoundError(f"no checkpoint {ident!r}", listing="lessonloop models list")


def list_models(name: str | None = None) -> dict[str, Any]:
    """Registered checkpoints (newest first) and the active competitor per scope."""
    from ..promotion import records
    from ..training import registry

    scope = _scope(_scenario(name)) if name else None
    with reading(paths.home()) as store:
        if store is None or not _has_registry(store):
            return {"checkpoints": [], "active": []}
        listed = registry.listing(store.conn, scope)
        scopes = sorted({c["scope"] for c in listed})
        active = [
            {"scope": s, "role": ROLE, **pointer}
            for s in scopes
            if (pointer := records.active(store.conn, s, ROLE)) is not None
        ]
    return {"checkpoints": listed, "active": active}


def _has_registry(store: Any) -> bool:
    return (
        store.query_one(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'model_checkpoints'"
        )
        is not None
    )


def show_model(ident: str) -> dict[str, Any]:
    """One checkpoint: its parameters, metrics, and its promotion candidates and decisions."""
    from ..promotion import records
    from ..training import registry

    with reading(paths.home()) as store:
        found = (
            registry.get(store.conn, ident) if store is not None and _has_registry(store) else None
        )
        if found is None or store is None:
            raise _unknown(ident)
        found["promotions"] = [
            c for c in records.listing(store.conn, found["scope"]) if c["ref"] == ident
        ]
        pointer = records.active(store.conn, found["scope"], ROLE)
    found["active"] = bool(pointer and pointer["ref"] == ident)
    return found


def activate_model(ident: str) -> dict[str, Any]:
    """Serve checkpoint ``ident`` as its scope's competitor by hand (recorded as the user's),
    keeping the one it replaces as the rollback target."""
    from ..promotion import records
    from ..training import registry

    show_model(ident)  # an unknown id fails before the home is written
    with writing(paths.home()) as store, store.transaction() as conn:
        found = registry.get(conn, ident)
        if found is None:
            raise _unknown(ident)
        pointer = records.active(conn, found["scope"], ROLE)
        if pointer is not None and pointer["ref"] == ident:
            raise UsageError(f"{ident} is already the active competitor of {found['scope']}")
        row = conn.execute(
            "SELECT id FROM promotion_candidates WHERE scope = ? AND role = ? AND kind = "
            "'checkpoint' AND ref = ? ORDER BY id DESC LIMIT 1",
            (found["scope"], ROLE, ident),
        ).fetchone()
        candidate_id = (
            row[0]
            if row is not None
            else records.add_candidate(conn, found["scope"], ROLE, "checkpoint", ident, "user")
        )
        pointer = records.activate(conn, candidate_id, "user", "activated by hand")
    return {"scope": found["scope"], "role": ROLE, **pointer}


def rollback_model(name: str, reason: str = "rolled back by hand") -> dict[str, Any]:
    """Serve again the competitor active before the last switch of ``name``'s scope."""
    from .promotion import rollback_promotion

    return rollback_promotion(_scenario(name).name, ROLE, reason)
