"""The ``evolve`` use case: read and check the spec, open the store, run or continue the
campaign under the home's ``runs/<id>/``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UsageError


def new_run_id() -> str:
    from ..loop.request import new_run_id as scenario_id

    return "evolve-" + scenario_id().removeprefix("run-")


def evolve(
    spec_path: Path,
    generations: int | None = None,
    seed: int = 0,
    run_id: str | None = None,
    on_generation: Callable[[dict[str, Any]], None] = lambda event: None,
) -> dict[str, Any]:
    """Evolve the spec's source for ``generations`` (default: the spec's budget); an existing
    ``run_id`` continues that run from its stored candidates."""
    from .. import paths
    from ..evolve import campaign, spec
    from ..loop.lifecycle import run_lock, sigterm_as_interrupt
    from ..loop.request import check_run_id
    from ..store import open_store

    if generations is not None and not 1 <= generations <= 10_000:
        raise UsageError("must be between 1 and 10000", field="generations")
    if not 0 <= seed < 2**63:
        raise UsageError("must be between 0 and 2**63 - 1", field="seed")
    if run_id is not None:
        check_run_id(run_id)
    loaded = spec.read(spec_path)
    loaded.require_params()
    run_id = run_id or new_run_id()
    paths.ensure_home()
    folder = paths.run_dir(run_id)
    # one process per run at a time; SIGTERM stops it as Ctrl-C does (stored, resumable)
    with run_lock(folder), sigterm_as_interrupt(), open_store() as store:
        return campaign.run(loaded, store, run_id, folder, seed, generations, on_generation)
