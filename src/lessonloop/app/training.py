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

BACKENDS = ("surrogate", "lora")
ROLE = "competitor"


def _scenario(name: str) -> Any:
    from .scenarios import scenario_named

    if name.strip().startswith("task:"):
        raise UsageError(
            "task training needs the lora backend (--backend lora): the surrogate models a "
            "scenario's strategy space"
        )
    return scenario_named(name)


def _scope(scenario: Any) -> str:
    from ..knowledge.entries import scenario_scope

    return scenario_scope(scenario.name)


def train(
    name: str,
    backend: str = "surrogate",
    base: str | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build ``name``'s dataset from the store, fit a ``backend`` model, register the
    checkpoint, trial it against the current competitor and activate it if the gate accepts.
    Returns the checkpoint, the dataset summary, the verdict and the timings. ``base`` and
    ``options`` (steps, learning_rate, rank, max_length) are the lora backend's."""
    if backend not in BACKENDS:
        raise UsageError(f"is one of {', '.join(BACKENDS)}, not {backend!r}", field="backend")
    if backend == "lora":
        return _train_lora(name, base, options or {})
    if base is not None or options:
        raise UsageError(
            "--base, --steps, --learning-rate, --rank and --max-length are for --backend lora"
        )
    return _train_surrogate(name)


def _train_surrogate(name: str) -> dict[str, Any]:
    from ..training import dataset as datasets
    from ..training import registry, surrogate, trial

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
            "surrogate",
            surrogate.BASE,
            [ROLE],
            data.data_hash,
            metrics,
            params,
        )
    candidate = trial.checkpoint_proposer({"params": params}, scenario)
    promotion, active = _promote(scenario, scope, ident, candidate)
    checkpoint = {"id": ident, "new": new, "scope": scope, "backend": "surrogate"}
    checkpoint |= {"base": surrogate.BASE, "metrics": metrics}
    return _trained(checkpoint, data.summary(), promotion, active, started, fitted)


def _trained(
    checkpoint: dict[str, Any],
    dataset: dict[str, Any],
    promotion: dict[str, Any],
    active: dict[str, Any] | None,
    started: float,
    fitted: float,
) -> dict[str, Any]:
    """What ``train`` answers: the checkpoint, its dataset, its promotion and the timings."""
    return {
        "checkpoint": checkpoint,
        "dataset": dataset,
        "promotion": promotion,
        "active": active,
        "seconds": {
            "dataset_and_fit": round(fitted - started, 3),
            "total": round(time.perf_counter() - started, 3),
        },
    }


def _promote(
    scenario: Any, scope: str, ident: str, candidate: Any
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Trial checkpoint ``ident`` (its proposer ``candidate``) against the scope's current
    competitor through the promotion gate, store the candidate, its trials and the decision,
    and activate it on a win. (The promotion summary, the active pointer.)"""
    from ..promotion import records
    from ..training import trial

    with reading(paths.home()) as store:
        assert store is not None  # the checkpoint was just registered in it
        incumbent_ref, incumbent = trial.current_competitor(store, scenario, scope)
        if incumbent_ref == ident:  # trained again on the same data: it is what is served
            return {
                "candidate_id": None,
                "incumbent": ident,
                "decision": "not trialled",
                "stage": "-",
                "statistic": "-",
                "rationale": "already the active competitor: not trialled against itself",
                "trials": 0,
                "plays": 0,
                "no_strategy": {},
                "activated": False,
                "held": None,
            }, records.active(store.conn, scope, ROLE)
    verdict, sides = trial.judge(scenario, ident, candidate, incumbent_ref, incumbent)
    # the candidate, its trials and the decision in one transaction: a kill during the trials
    # leaves no candidate pending (the checkpoint stays registered; training again trials it)
    with writing(paths.home()) as store, store.transaction() as conn:
        candidate_id = records.add_candidate(
            conn, scope, ROLE, "checkpoint", ident, "train", incumbent_ref=incumbent_ref
        )
        settled = settle_verdict(store, candidate_id, verdict)
        active = records.active(conn, scope, ROLE)
    promotion = {
        "candidate_id": candidate_id,
        "incumbent": incumbent_ref,
        "decision": verdict.decision,
        "stage": verdict.stage,
        "statistic": verdict.statistic,
        "rationale": verdict.rationale,
        "trials": len(verdict.trials),
        "plays": sides.plays,
        "no_strategy": dict(sides.no_strategy),
        "activated": settled["activated"],
        "held": settled["held"],
    }
    return promotion, active


def _task_scope(store: Any, stored: str) -> str:
    """A task's knowledge scope, from the task stored with its latest run."""
    from ..store import runs as run_store
    from ..tasks.spec import parse

    row = store.query_one(
        "SELECT config_json FROM runs WHERE scenario = ? ORDER BY created_at DESC LIMIT 1",
        (stored,),
    )
    config = run_store.loads(row["config_json"])
    return f"task:{parse(config['task'], 'the task stored with the run').slug}"


def _train_lora(name: str, base: str | None, settings: dict[str, Any]) -> dict[str, Any]:
    """The lora backend: the kept generations' prompt/completion records of every run of
    ``name`` (a scenario or ``task:NAME``), a LoRA fine-tune of ``base``, the adapter under
    the home, the checkpoint registered, then (for a scenario) its trials. A task's checkpoint
    is registered and not trialled (no matched trial through a task's evaluator yet), so it is
    never served."""
    from ..knowledge import entries as knowledge_entries
    from ..training import completions, lora, registry

    opts = lora.Options(**settings).check()
    lora.require()  # the missing extra named before anything is read
    text = name.strip()
    task = text.startswith("task:")
    scenario = None if task else _scenario(text)
    stored = text if scenario is None else scenario.name
    resolved = lora.resolve_base(base or lora.DEFAULT_BASE)
    home = paths.home()
    started = time.perf_counter()
    scope, served = "", []
    with reading(home) as store:
        data = completions.build(store, stored) if store is not None else None
        if store is not None and data is not None and data.records:
            scope = _task_scope(store, stored) if task else _scope(scenario)
            served = knowledge_entries.active(store, scope)
    if data is None or not data.records:
        how = "lessonloop improve" if task else f"lessonloop run {stored}"
        raise NotFoundError(
            f"no kept generations of {stored} to train on: run it first (`{how}`; a "
            "generation is kept when it advances)"
        )
    identity = opts.identity()
    ident = registry.checkpoint_id(scope, lora.BACKEND, resolved, data.data_hash, identity)
    with reading(home) as store:
        existing = registry.get(store.conn, ident) if store is not None else None
    new = existing is None
    if existing is not None and lora.intact(home, existing):
        metrics = existing["metrics"]
    else:  # not trained yet, or its adapter was lost: (re)write it
        target = lora.adapter_path(home, ident)
        metrics = lora.fit(data.records, resolved, opts, target)
        metrics["trialled"] = not task
        params = {
            "adapter": target.relative_to(home).as_posix(),
            "sha256": lora.digest(target),
            "options": identity,
        }
        with writing(home) as store, store.transaction() as conn:
            if existing is None:
                registry.register(
                    conn,
                    scope,
                    lora.BACKEND,
                    resolved,
                    [ROLE],
                    data.data_hash,
                    metrics,
                    params,
                    identity=identity,
                )
            else:
                registry.replace_params(conn, ident, metrics, params)
    fitted = time.perf_counter()
    with reading(home) as store:
        checkpoint = registry.get(store.conn, ident) if store is not None else None
    assert checkpoint is not None  # registered above or before
    if scenario is None:
        promotion: dict[str, Any] = {
            "decision": "not trialled",
            "rationale": "a task's checkpoint is registered but not trialled (no matched "
            "trial through the task's evaluator yet), so it is not served",
            "activated": False,
        }
        active = None
    else:
        from ..training import trial

        candidate = trial.checkpoint_proposer(checkpoint, scenario, served)
        promotion, active = _promote(scenario, scope, ident, candidate)
    adapter = str(home / checkpoint["params"]["adapter"])
    shown = {"id": ident, "new": new, "scope": scope, "backend": lora.BACKEND}
    shown |= {"base": resolved, "metrics": metrics, "adapter": adapter}
    return _trained(shown, data.summary(), promotion, active, started, fitted)


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
    if found["backend"] == "lora":  # where its adapter is on this machine
        found["adapter"] = str(paths.home() / found["params"]["adapter"])
    return found


def activate_model(ident: str) -> dict[str, Any]:
    """Serve checkpoint ``ident`` as its scope's competitor by hand (recorded as the user's),
    keeping the one it replaces as the rollback target."""
    from ..promotion import records
    from ..training import registry

    shown = show_model(ident)  # an unknown id fails before the home is written
    if shown["backend"] == "lora":
        from ..training import lora

        if not lora.intact(paths.home(), shown):
            raise NotFoundError(
                f"the adapter of {ident} is missing or changed: train it again "
                "(`lessonloop train ... --backend lora`) rather than serve it"
            )
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
