"""The ``evolve`` use case: read and check the spec, open the store, run or continue the
campaign under the home's ``runs/<id>/``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    from ..evolve.campaign import Route


def new_run_id() -> str:
    from ..loop.request import new_run_id as scenario_id

    return "evolve-" + scenario_id().removeprefix("run-")


def gain_label(metric: str, direction: str) -> str:
    """What a gain is called where it is shown (a speed-up only when the metric is time)."""
    from ..evolve.measure import label

    return label(metric, direction)


def amount(value: float, metric: str | None) -> str:
    """A measurement in its metric's unit (as every interface shows it)."""
    from ..evolve.measure import amount as in_unit

    return in_unit(value, metric)


def bound_label(stats: dict[str, Any]) -> str:
    """How a gain's bound was found: at the gate's confidence, or the worst pair (counts)."""
    from ..evolve.measure import bound_words

    return bound_words(stats)


def model_route(provider: str | None, model: str | None, max_calls: int | None) -> Route | None:
    """The competitor's route as ``run``/``improve`` resolve it (flags, config, environment):
    a model writes the candidates; the offline ``local`` agent means the parameter tuner."""
    from .. import config
    from ..evolve.campaign import Route
    from ..providers.registry import build_routes

    settings = config.load(flags={"PROVIDER": provider, "MODEL": model})
    route = settings.routes()["competitor"]
    if route.kind == "local":
        if max_calls is not None:
            raise UsageError(
                "--max-calls bounds a model's calls, and no model route is set (the offline "
                "tuner makes no calls; a new evolve run takes --provider)"
            )
        return None
    return Route(build_routes({"competitor": route}, settings)["competitor"], max_calls)


def evolve(
    spec_path: Path,
    generations: int | None = None,
    seed: int | None = None,
    run_id: str | None = None,
    on_generation: Callable[[dict[str, Any]], None] = lambda event: None,
    provider: str | None = None,
    model: str | None = None,
    max_calls: int | None = None,
) -> dict[str, Any]:
    """Evolve the spec's source for ``generations`` (default: the spec's budget); an existing
    ``run_id`` continues that run from its stored candidates. With a model route (``provider``
    or the configured one) a model writes each candidate; without one the offline tuner sets
    the source's declared parameters."""
    from .. import paths
    from ..evolve import campaign, spec
    from ..loop.budget import check_limits
    from ..loop.lifecycle import run_lock, sigterm_as_interrupt
    from ..loop.request import check_run_id
    from ..store import open_store

    if generations is not None and not 1 <= generations <= 10_000:
        raise UsageError("must be between 1 and 10000", field="generations")
    if seed is not None and not 0 <= seed < 2**63:
        raise UsageError("must be between 0 and 2**63 - 1", field="seed")
    if run_id is not None:
        check_run_id(run_id)
    check_limits(max_calls, None)
    loaded = spec.read(spec_path)
    if provider is None:  # a run continued goes on as it began: the tuner, or its model
        from .run_kinds import EVOLVE, stored_provider

        provider = stored_provider(run_id, (EVOLVE,))
    route = model_route(provider, model, max_calls)
    if route is None:
        loaded.require_params()
    run_id = run_id or new_run_id()
    paths.ensure_home()
    folder = paths.run_dir(run_id)
    from .run_kinds import play

    # one process per run at a time; SIGTERM stops it as Ctrl-C does (stored, resumable); its
    # events (``watch``, the dashboard) around it
    with run_lock(folder), sigterm_as_interrupt(), open_store() as store:
        result: dict[str, Any] = play(
            store,
            run_id,
            f"evolve:{loaded.spec.name}",
            (generations, loaded.spec.budget.generations),
            lambda events: campaign.run(
                loaded,
                store,
                run_id,
                folder,
                seed,
                generations,
                events.relay(on_generation, "generation"),
                route,
            ),  # fmt: skip
        )
        return result
