"""The HTML report of a run (``runs/<id>/report.html``) and the page of a run comparison.

Below ``app/``: the engine may call ``write_run_report`` when a run ends, with the store it
holds open; ``app/report.py`` is the use case around it. This package reads the store and the
knowledge entries only (never ``app/``, an adapter, ``loop/`` or ``tasks/`` at import time).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store.db import Store

REPORT_NAME = "report.html"


def write_run_report(store: Store, run_id: str, run_dir: Path | None = None) -> Path:
    """Render the run's page from ``store`` and write it atomically to
    ``runs/<id>/report.html`` (NotFoundError for an unknown run id); returns its path."""
    from .. import paths
    from ..files import atomic_write
    from .data import collect
    from .page import run_page

    report = collect(store, run_id)
    path = (run_dir or paths.run_dir(run_id)) / REPORT_NAME
    atomic_write(path, run_page(report))
    return path
