"""Reports: a run's self-contained HTML page, written next to its ``report.md``."""

from __future__ import annotations

from pathlib import Path

from .. import paths
from ..errors import NotFoundError


def write_html_report(run_id: str) -> Path:
    """Write ``runs/<id>/report.html`` from the store and return its path (NotFoundError, one
    line, for an unknown run id or a home with no database yet)."""
    from ..report import write_run_report
    from .stores import reading

    with reading(paths.home()) as store:
        if store is None:
            raise NotFoundError(f"unknown run id {run_id!r} (no lessonloop database here yet)")
        return write_run_report(store, run_id)
