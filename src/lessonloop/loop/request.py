"""A run's request, on disk before anything else, so ``resume`` works however early a ``run``
was killed.

The run's row is created only after its scenario, routes and starting strategy are checked,
which takes a while at start-up (longer under load). ``run`` first writes what it was asked
(``runs/<id>/request.json``: scenario, iterations, the flags given) and removes it once the
row exists; ``resume`` of an id without a row creates the run from it, exactly as ``run
--run-id ID`` with the same flags would. A request the run refused (a bad flag, an unknown
scenario) is removed with the refusal. Light on purpose: ``run`` imports it first.
"""

from __future__ import annotations

import json
import re
import secrets
from datetime import UTC, datetime
from pathlib import Path

from .. import files, paths
from ..errors import UsageError

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
NAME = "request.json"


def new_run_id() -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"run-{stamp}-{secrets.token_hex(3)}"


def check_run_id(run_id: str) -> None:
    """Refuse an id that cannot name a folder safely, or that looks like a secret."""
    if not RUN_ID.match(run_id):
        raise UsageError(
            f"invalid run id {run_id!r}: 1-64 letters, digits, '-' or '_', "
            "starting with a letter or digit"
        )
    from ..safety import find_secrets

    if find_secrets(run_id):  # it names a folder and a report: keep it off the disk
        raise UsageError("that run id looks like a secret (a token or key): choose another")


def _path(run_id: str, root: Path | None = None) -> Path:
    return paths.run_dir(run_id, root) / NAME


def save(run_id: str, scenario: str, iterations: int | None, overrides: dict) -> None:
    """Keep what ``run`` was asked, before it checks or creates anything (``scenario`` as
    ``registry.canonical_reference`` gives it, so it resolves from any folder)."""
    paths.ensure_home()
    files.atomic_write(
        _path(run_id),
        json.dumps({"scenario": scenario, "iterations": iterations, "overrides": overrides}),
    )


def load(run_id: str, root: Path | None = None) -> dict | None:
    """The request of a run that was asked for but has no row yet, or None: what ``run``
    parsed, or (killed sooner) the command line ``started`` kept."""
    try:
        value = json.loads(_path(run_id, root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        isinstance(value, dict)
        and isinstance(value.get("argv"), list)
        and all(isinstance(a, str) for a in value["argv"])
        and isinstance(value.get("cwd"), str)
    ):
        return value  # the command line itself, kept by ``started`` before the CLI loaded
    if not (
        isinstance(value, dict)
        and isinstance(value.get("scenario"), str)
        and isinstance(value.get("overrides"), dict)
        and (value.get("iterations") is None or isinstance(value["iterations"], int))
    ):
        return None
    return value


def discard(run_id: str) -> None:
    """Forget the request (its row exists, or the run refused it); the folder goes with it
    when nothing else is in it."""
    path = _path(run_id)
    try:
        path.unlink()
        path.parent.rmdir()
    except OSError:
        pass


def pending(known: set[str], root: Path | None = None) -> list[dict]:
    """Runs asked for whose row never came (killed at start-up), ids not in ``known``, newest
    first: ``{"run_id", "scenario", "target_generations", "created_at"}`` for ``list``, so
    their ids can be found and resumed."""
    import time

    found = []
    folder = paths.runs_dir(root)
    for path in folder.glob(f"*/{NAME}") if folder.is_dir() else ():
        run_id = path.parent.name
        asked = load(run_id, root)
        if run_id in known or asked is None:
            continue
        argv = asked.get("argv") or []
        scenario = asked.get("scenario") or (argv[1] if len(argv) > 1 else "?")
        try:
            when = path.stat().st_mtime
        except OSError:
            continue
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when))
        found.append(
            {
                "run_id": run_id,
                "scenario": scenario,
                "created_at": f"{stamp}Z",
                "target_generations": asked.get("iterations"),
            }
        )
    return sorted(found, key=lambda r: r["created_at"], reverse=True)
