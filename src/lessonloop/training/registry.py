"""The model registry: trained checkpoints in the store (migration 14).

A checkpoint's id is derived from its content (backend, scope, base, data hash and fitted
parameters), so training again on the same data registers nothing new. Registering never
serves it: a checkpoint becomes a scope's competitor only through the promotion gate
(``promotion/records.py``: candidate of role ``competitor``, kind ``checkpoint``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from .. import canonical
from ..timeutil import utc_now

PREFIX = "ckpt-"


def checkpoint_id(
    scope: str, backend: str, base: str, data_hash: str, params: dict[str, Any]
) -> str:
    content = canonical.dumps([scope, backend, base, data_hash, params])
    return PREFIX + hashlib.sha256(content.encode()).hexdigest()[:16]


def register(
    conn: sqlite3.Connection,
    scope: str,
    backend: str,
    base: str,
    roles: list[str],
    data_hash: str,
    metrics: dict[str, Any],
    params: dict[str, Any],
    identity: dict[str, Any] | None = None,
) -> tuple[str, bool]:
    """Store a checkpoint; (its id, whether it is new). ``identity``: what names it instead of
    ``params`` (a lora checkpoint: its training settings, since the adapter's digest is known
    only after training, and the adapter folder is named by the id)."""
    ident = checkpoint_id(scope, backend, base, data_hash, params if identity is None else identity)
    cursor = conn.execute(
        "INSERT OR IGNORE INTO model_checkpoints (id, scope, backend, base, roles_json, "
        "data_hash, metrics_json, params_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            ident,
            scope,
            backend,
            base,
            canonical.dumps(roles),
            data_hash,
            canonical.dumps(metrics),
            canonical.dumps(params),
            utc_now(),
        ),
    )
    return ident, cursor.rowcount == 1


def replace_params(
    conn: sqlite3.Connection, ident: str, metrics: dict[str, Any], params: dict[str, Any]
) -> None:
    """A checkpoint trained again because its files were lost (a lora adapter deleted from
    the home): the same id, the new files' metrics and digest."""
    conn.execute(
        "UPDATE model_checkpoints SET metrics_json = ?, params_json = ? WHERE id = ?",
        (canonical.dumps(metrics), canonical.dumps(params), ident),
    )


_COLUMNS = "id, scope, backend, base, roles_json, data_hash, metrics_json, params_json, created_at"


def _checkpoint(row: Any, with_params: bool) -> dict[str, Any]:
    found = {
        "id": row[0],
        "scope": row[1],
        "backend": row[2],
        "base": row[3],
        "roles": json.loads(row[4]),
        "data_hash": row[5],
        "metrics": json.loads(row[6]),
        "created_at": row[8],
    }
    if with_params:
        found["params"] = json.loads(row[7])
    return found


def get(conn: sqlite3.Connection, ident: str) -> dict[str, Any] | None:
    """A checkpoint with its fitted parameters, or None."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM model_checkpoints WHERE id = ?", (ident,)
    ).fetchone()
    return None if row is None else _checkpoint(tuple(row), with_params=True)


def listing(conn: sqlite3.Connection, scope: str | None = None) -> list[dict[str, Any]]:
    """Checkpoints (newest first) without their parameters."""
    where, params = ("WHERE scope = ?", (scope,)) if scope else ("", ())
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM model_checkpoints {where} ORDER BY created_at DESC, id",
        params,
    ).fetchall()
    return [_checkpoint(tuple(row), with_params=False) for row in rows]
