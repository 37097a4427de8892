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
from datetime import datetime, timezone
from pathlib import Path

from .. import files, paths
from ..errors import UsageError

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
NAME = "request.json"


def new_run_id() -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"run-{stamp}-{secrets.token_hex(3)}"


def check_run_id(run_id: str) -> None:
    """Refuse an id that cannot name a folder safely, or that looks like a secret."""
    if not RUN_ID.match(run_id):
        raise UsageError(f"invalid run id {run_id!r}: 1-64 letters, digits, '-' or '_', "
                         "starting with a letter or digit")
    from ..safety import find_secrets

    if find_secrets(run_id):  # it names a folder and a report: keep it off the disk
        raise UsageError("that run id looks like a secret (a token or key): choose another")


def _path(run_id: str, root: Path | None = None) -> Path:
    return paths.run_dir(run_id, root) / NAME


def save(run_id: str, scenario: str, iterations: int | None, overrides: dict) -> None:
    """Keep what ``run`` was asked, before it checks or creates anything (``scenario`` as
    ``registry.canonical_reference`` gives it, so it resolves from any folder)."""
    paths.ensure_home()
    files.atomic_write(_path(run_id), json.dumps(
        {"scenario": scenario, "iterations": iterations, "overrides": overrides}))


def load(run_id: str) -> dict | None:
    """The request of a run that was asked for but has no row yet, or None."""
    try:
        value = json.loads(_path(run_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(value, dict) and isinstance(value.get("scenario"), str)
            and isinstance(value.get("overrides"), dict)
            and (value.get("iterations") is None or isinstance(value["iterations"], int))):
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
