"""A scenario run's row: created from the request (options checked, routes resolved, the best
known strategy carried over), or reused when the run id exists (its settings kept, its budgets
raised). The use cases call it before the run executes, so a bad request fails before anything
is written."""

from __future__ import annotations

import json
from dataclasses import asdict

from .. import config
from ..errors import UsageError
from ..providers.registry import build_routes
from ..scenarios import code, registry, space
from ..store import runs as run_store
from ..store.db import Store
from .options import BUDGETS, FLAGS, RunOptions, check_iterations
from .request import check_run_id, new_run_id


def create_or_reuse(
    store: Store,
    scenario_name: str,
    iterations: int,
    overrides: dict | None = None,
    run_id: str | None = None,
) -> str:
    """Create a run, or return ``run_id`` when it already exists (re-running resumes it).

    ``overrides`` are the options the user gave explicitly; an existing run keeps its own
    settings, so a conflicting override is refused rather than silently ignored.
    """
    check_iterations(iterations)
    overrides = overrides or {}
    if run_id is not None:
        check_run_id(run_id)
        existing = run_store.find_run(store, run_id)
        if existing is not None:
            if existing["kind"] not in ("scenario", None):  # a task's rounds, evolve, mission
                raise UsageError(
                    f"run {run_id!r} is a {existing['kind']} run, not a run of a scenario: "
                    f"continue it with `lessonloop resume {run_id}`"
                )
            reference = registry.canonical_reference(scenario_name)
            if reference not in (existing["scenario"], existing["scenario_ref"]):
                raise UsageError(
                    f"run {run_id!r} is a {existing['scenario']!r} run, not {scenario_name!r}"
                )
            stored = json.loads(existing["config_json"])
            budgets = {name: overrides.pop(name) for name in BUDGETS if name in overrides}
            for name, value in overrides.items():
                if stored.get(name) != value:
                    flag = FLAGS.get(name, "--" + name.replace("_", "-"))
                    raise UsageError(
                        f"run {run_id!r} keeps the settings it was created with "
                        f"({name} = {stored.get(name)}); drop {flag} or start a new run"
                    )
            if budgets:
                RunOptions(**budgets).check()
                run_store.update_config(store, run_id, {**stored, **budgets})
            return run_id
    options = RunOptions(**overrides).check()
    scenario = registry.load(scenario_name)
    settings = config.load(flags={"PROVIDER": options.provider, "MODEL": options.model})
    routes = settings.routes()
    if options.knowledge and settings.lookup("COMPETITOR_PROVIDER", "PROVIDER")[1] == "default":
        routes = _with_served_competitor(store, scenario.name, routes)
    providers = build_routes(routes, settings)  # a bad route fails before anything is created
    if routes["competitor"].kind == "trained":
        from ..training.provider import check_serves

        check_serves(providers["competitor"], scenario.name)
    if providers["competitor"].name == "local":
        space.parameters(scenario.strategy_schema)  # the offline agent must be able to search it
    if "context_trials" not in overrides:  # on where trials cost only plays: the offline agent
        options.context_trials = "screen" if providers["competitor"].name == "local" else "off"
    options.routes = {role: route.to_dict() for role, route in routes.items()}
    options.provider, options.model = routes["competitor"].provider, routes["competitor"].model
    if options.carry_incumbent:
        options.start_incumbent = best_known_strategy(store, scenario)
    run_id = run_id or new_run_id()
    run_store.create_run(
        store,
        run_id=run_id,
        scenario=scenario.name,
        scenario_ref=registry.canonical_reference(scenario_name),
        target_generations=iterations,
        provider=options.provider,
        seed=options.seed,
        config=asdict(options),
    )
    return run_id


def _with_served_competitor(
    store: Store, scenario_name: str, routes: dict[str, config.Route]
) -> dict[str, config.Route]:
    """``routes`` with the competitor the scenario's scope serves, when no provider was chosen:
    a trained checkpoint that won its promotion trials (``training/provider.py``)."""
    from ..training.provider import served_competitor

    served = served_competitor(store.conn, scenario_name)
    return {**routes, "competitor": config.Route(served)} if served else routes


def best_known_strategy(store: Store, scenario) -> dict | None:
    """The strongest final incumbent among earlier runs of this scenario that are not running.

    A run's final incumbent beat every strategy before it in that run on paired and holdout
    seeds; between runs, the one with the highest tournament mean wins. Never the validated
    score: validation seeds only report (a choice made by them would flatter the next run's
    validated score of the same strategy on the same seeds).
    """
    epoch = registry.evaluator_epoch(scenario)
    rows = store.query(
        "SELECT g.run_id, g.generation_index, g.strategy_json, g.mean_score FROM generations g "
        "JOIN runs r ON r.run_id = g.run_id WHERE r.scenario = ? AND g.evaluator_epoch = ? "
        "AND r.status NOT IN ('running', 'created') AND g.gate_decision = 'advance' "
        "AND g.generation_index = (SELECT MAX(h.generation_index) FROM generations h "
        "WHERE h.run_id = g.run_id AND h.gate_decision = 'advance') "
        "ORDER BY g.mean_score DESC, r.created_at DESC",
        (scenario.name, epoch),
    )
    for row in rows:
        strategy = json.loads(row["strategy_json"])
        try:
            if code.problems(scenario, strategy):
                continue
        except Exception:
            continue
        return {
            "strategy": strategy,
            "score": row["mean_score"],
            "from_run": row["run_id"],
            "generation": row["generation_index"],
        }
    return None
