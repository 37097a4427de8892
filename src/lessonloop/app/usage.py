"""Usage: provider calls, tokens and cost, in total, per role and per model (all runs, or one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence


def usage(run_id: str | None = None) -> dict[str, Any]:
    """Totals over the provider-call ledger (one run's calls with ``run_id``): calls, tokens,
    retries and cost, which is null as soon as one call's price is unknown."""
    from ..store import open_store
    from ..store import runs as run_store

    with open_store(readonly=True) as store:
        if run_id is not None:
            run_store.get_run(store, run_id)
            rows = run_store.provider_calls(store, run_id)
        else:
            rows = store.query("SELECT * FROM provider_calls ORDER BY id")
    report = _total(rows)
    report["by_role"] = {
        role: _total([row for row in rows if row["role"] == role])
        for role in sorted({row["role"] for row in rows})
    }
    report["by_model"] = {
        model: _total([row for row in rows if (row["model"] or row["provider"]) == model])
        for model in sorted({row["model"] or row["provider"] for row in rows})
    }
    return report


def _total(rows: Sequence[sqlite3.Row]) -> dict[str, Any]:
    unpriced = sum(row["calls"] for row in rows if row["cost"] is None)
    return {
        "calls": sum(row["calls"] for row in rows),
        "input_tokens": sum(row["input_tokens"] or 0 for row in rows),
        "output_tokens": sum(row["output_tokens"] or 0 for row in rows),
        "cost": None if unpriced else round(sum(row["cost"] for row in rows), 8),
        "unpriced_calls": unpriced,
        "retries": sum(row["retries"] for row in rows),
    }
