"""One way to open the SQLite store: WAL, busy timeout, retry with backoff, clear errors.

Writers use :meth:`Store.transaction` (``BEGIN IMMEDIATE``, retried with jittered exponential
backoff while another process holds the write lock), so concurrent runs and hooks lose nothing.
Inspection commands open the file read-only, so they also work on a read-only copy.
"""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import NotFoundError, StoreError, no_space
from . import migrations

BUSY_TIMEOUT_MS = 5000
RETRY_ATTEMPTS = 8
RETRY_BASE_SECONDS = 0.05
FULL_BELOW = 1 << 20  # bytes free under which a "disk I/O error" is taken for a full disk


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def describe_error(path: Path, exc: sqlite3.Error) -> StoreError:
    """Turn an sqlite3 error into one line a user can act on."""
    text = str(exc)
    lower = text.lower()
    if "not a database" in lower or "malformed" in lower or "corrupt" in lower:
        return StoreError(
            f"database {path} is corrupt or not a lessonloop database ({text}); "
            "move it aside to start afresh"
        )
    if "readonly" in lower or "read-only" in lower:
        return StoreError(
            f"database {path} is read-only; inspection commands still work, "
            "but this command needs to write (check the file's permissions or LESSONLOOP_HOME)"
        )
    if "disk is full" in lower or ("disk i/o error" in lower and _nearly_full(path)):
        return no_space(path)
    if "unable to open" in lower:
        return StoreError(f"cannot open database {path} ({text}); check LESSONLOOP_HOME")
    if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
        return StoreError(f"database {path} stayed locked by another process ({text}); try again")
    return StoreError(f"database error in {path}: {text}")


def _nearly_full(path: Path) -> bool:
    """SQLite reports a write that ran out of space in its WAL or shared memory as a "disk
    I/O error": the free space on the database's device tells which it was."""
    try:
        found = os.statvfs(path.parent)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < FULL_BELOW


def begin_immediate(conn: sqlite3.Connection) -> None:
    """Take the write lock, retrying with jittered exponential backoff while others hold it."""
    for attempt in range(RETRY_ATTEMPTS):
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or attempt == RETRY_ATTEMPTS - 1:
                raise
            time.sleep(RETRY_BASE_SECONDS * (2**attempt) * (0.5 + random.random()))


class Store:
    """A connection to the lessonloop database with retrying transactions."""

    def __init__(self, conn: sqlite3.Connection, path: Path, readonly: bool):
        self.conn = conn
        self.path = path
        self.readonly = readonly
        conn.row_factory = sqlite3.Row

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A short write transaction; busy errors at BEGIN are retried with backoff.

        Inside an open transaction it joins it, so callers can group several writers
        (a generation and the knowledge it changes) into one atomic commit.
        """
        if self.readonly:
            raise StoreError(f"database {self.path} was opened read-only")
        if self.conn.in_transaction:
            yield self.conn
            return
        try:
            begin_immediate(self.conn)
        except sqlite3.Error as exc:
            raise describe_error(self.path, exc) from None
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise describe_error(self.path, exc) from None
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise describe_error(self.path, exc) from None

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def query_aggregate(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row:
        """The row of an aggregate query (COUNT, SUM, MAX... without GROUP BY), which always
        has exactly one."""
        return self.query(sql, params)[0]

    def vacuum(self) -> None:
        """Give deleted rows' space back to the file system (housekeeping after a prune)."""
        try:
            self.conn.execute("VACUUM")
            # in WAL mode VACUUM writes the whole database into the WAL: copy it back and
            # truncate both files now, not when the last connection closes (a long-lived
            # reader, such as the MCP server, would otherwise leave the store larger)
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            raise describe_error(self.path, exc) from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _connect(target: str, uri: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(
        target,
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        uri=uri,
        check_same_thread=False,
    )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL. On a new database the switch takes a lock that SQLite's busy handler does
    not wait for: two processes opening a fresh home at once would see "database is locked"
    at once, so the switch is retried (with backoff) for as long as a busy write would wait."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def _open_writable(path: Path) -> Store:
    try:
        conn = _connect(str(path), uri=False)
        _use_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        _check_not_newer(path, migrations.current_version(conn))
        migrations.migrate(conn, begin_immediate)
    except sqlite3.Error as exc:
        raise describe_error(path, exc) from None
    return Store(conn, path, readonly=False)


def _open_readonly(path: Path) -> Store:
    """Read-only, falling back to ``immutable`` when the directory forbids WAL's shm file."""
    last_error: sqlite3.Error | None = None
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        try:
            conn = _connect(f"{path.as_uri()}?{flags}", uri=True)
            version = migrations.current_version(conn)
        except sqlite3.Error as exc:
            last_error = exc
            if "not a database" in str(exc).lower() or "malformed" in str(exc).lower():
                break
            continue
        _check_not_newer(path, version)
        if version == 0:
            conn.close()
            raise NotFoundError(f"{path} holds no lessonloop data yet (nothing has run here)")
        if version < migrations.LATEST_VERSION:  # an older lessonloop wrote it: upgrade once
            conn.close()
            return _upgrade_then_reopen(path)
        if "immutable" in flags and _wal_has_data(path):
            sys.stderr.write(
                f"warning: {path.parent} is read-only, so changes still in "
                f"{path.name}-wal are not shown\n"
            )
        return Store(conn, path, readonly=True)
    assert last_error is not None
    raise describe_error(path, last_error)


def _check_not_newer(path: Path, version: int) -> None:
    if version > migrations.LATEST_VERSION:
        raise StoreError(
            f"database {path} was written by a newer lessonloop (schema {version}, this version "
            f"knows {migrations.LATEST_VERSION}); upgrade lessonloop"
        )


def _wal_has_data(path: Path) -> bool:
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        return False


def _upgrade_then_reopen(path: Path) -> Store:
    try:
        _open_writable(path).close()
    except StoreError as exc:
        raise StoreError(
            f"database {path} uses an older schema and cannot be upgraded here: {exc}"
        ) from None
    return _open_readonly(path)


def open_store(root: Path | None = None, *, readonly: bool = False) -> Store:
    """Open the store under the lessonloop home.

    Writers create the home and database on first use; readers require it to exist.
    """
    root = root or paths.home()
    path = paths.db_path(root)
    if readonly:
        if root.exists() and not root.is_dir():
            raise StoreError(
                f"the lessonloop home {root} is not a directory (check {paths.variable_for(root)})"
            )
        try:
            found = path.exists()
        except OSError as exc:
            raise StoreError(f"cannot access {path}: {exc.strerror or exc}") from None
        if not found:
            raise NotFoundError(f"no lessonloop database at {path} (nothing has run here yet)")
        return _open_readonly(path)
    paths.ensure_home(root)
    if path.exists() and not os.access(path, os.W_OK):
        raise describe_error(path, sqlite3.OperationalError("attempt to write a readonly database"))
    return _open_writable(path)
