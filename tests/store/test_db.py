"""The store: migrations, WAL, busy retry, concurrent writers, corrupt and read-only files."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from lessonloop.errors import NotFoundError, StoreError
from lessonloop.store import db, migrations, open_store


def test_first_open_creates_home_gitignore_wal_and_records_migrations(home):
    with open_store() as store:
        mode = store.query_one("PRAGMA journal_mode")[0]
        versions = [r["version"] for r in store.query("SELECT version FROM schema_migrations")]
        tables = {
            r["name"] for r in store.query("SELECT name FROM sqlite_master WHERE type='table'")
        }
    assert (home / ".gitignore").read_text() == "*\n"
    assert (home / "lessonloop.db").exists()
    assert mode == "wal"
    assert versions == [v for v, _, _ in migrations.MIGRATIONS]
    assert {
        "runs",
        "generations",
        "matches",
        "role_outputs",
        "provider_calls",
        "gate_decisions",
    } <= tables


def test_migrations_are_forward_only_and_idempotent(home):
    open_store().close()
    conn = sqlite3.connect(home / "lessonloop.db", isolation_level=None)
    assert migrations.migrate(conn, db.begin_immediate) == []
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(
        migrations.MIGRATIONS
    )


def test_reader_requires_an_existing_database(home):
    with pytest.raises(NotFoundError):
        open_store(readonly=True)
    assert not home.exists()


def test_transaction_rolls_back_on_error(home):
    with open_store() as store:
        with pytest.raises(RuntimeError):
            with store.transaction() as conn:
                conn.execute("INSERT INTO schema_migrations VALUES (999, 'x', 'y')")
                raise RuntimeError("boom")
        assert store.query_one("SELECT 1 FROM schema_migrations WHERE version = 999") is None


def test_busy_writer_waits_and_retries_instead_of_failing(home, monkeypatch):
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    open_store().close()
    holder = sqlite3.connect(
        home / "lessonloop.db", isolation_level=None, timeout=0, check_same_thread=False
    )
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Timer(0.4, lambda: holder.execute("COMMIT"))
    released.start()
    started = time.monotonic()
    with open_store() as store:
        with store.transaction() as conn:
            conn.execute(
                "INSERT INTO provider_calls (run_id, generation_index, attempt, role, provider, "
                "latency_ms, created_at) VALUES ('after-wait', 1, 0, 'coach', 'local', 0, 'now')"
            )
    released.join()
    assert time.monotonic() - started >= 0.3
    with open_store(readonly=True) as store:
        assert (
            store.query_one("SELECT COUNT(*) FROM provider_calls WHERE run_id = 'after-wait'")[0]
            == 1
        )


def _writer(home: str, worker: int, count: int) -> None:
    os.environ["LESSONLOOP_HOME"] = home
    with open_store() as store:
        for i in range(count):
            with store.transaction() as conn:
                conn.execute(
                    "INSERT INTO provider_calls (run_id, generation_index, attempt, role, provider, "
                    "latency_ms, created_at) VALUES (?, ?, 0, 'coach', 'local', 0, 'now')",
                    (f"w{worker}", i),
                )


def test_concurrent_writers_lose_nothing(home):
    open_store().close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(home), w, 40)) for w in range(6)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(60)
        assert p.exitcode == 0
    with open_store(readonly=True) as store:
        assert store.query_one("SELECT COUNT(*) FROM provider_calls")[0] == 6 * 40


def test_corrupt_database_gives_one_clear_error(home):
    home.mkdir(parents=True)
    (home / "lessonloop.db").write_bytes(b"this is not sqlite" * 100)
    for readonly in (False, True):
        with pytest.raises(StoreError, match="corrupt"):
            open_store(readonly=readonly)


def _as_nobody() -> list[str] | None:
    """A command prefix that drops root, so file permissions apply in the test."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if not setpriv:
        return None
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.parametrize("read_only", ["directory", "file"])
def test_read_only_database_still_inspects_but_refuses_writes(monkeypatch, read_only):
    prefix = _as_nobody()
    if prefix is None:
        pytest.skip("needs setpriv to drop root privileges")
    base = tempfile.mkdtemp(prefix="lessonloop-ro-")
    home = os.path.join(base, "home")
    os.chmod(base, 0o755)
    monkeypatch.setenv("LESSONLOOP_HOME", home)
    open_store().close()
    os.chmod(os.path.join(home, "lessonloop.db"), 0o444)
    os.chmod(home, 0o555 if read_only == "directory" else 0o777)
    code = (
        "from lessonloop.store import open_store\n"
        "from lessonloop.errors import LessonloopError\n"
        "with open_store(readonly=True) as s: print(s.query_one('SELECT COUNT(*) FROM runs')[0])\n"
        "try:\n    open_store()\nexcept LessonloopError as e: print('refused:', e)\n"
    )
    src = os.path.abspath(os.path.join(os.path.dirname(db.__file__), "..", ".."))
    env = dict(os.environ, LESSONLOOP_HOME=home, PYTHONPATH=src)
    try:
        proc = subprocess.run(
            prefix + [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/"
        )
    finally:
        os.chmod(home, 0o755)
        shutil.rmtree(base)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "0"
    assert lines[1].startswith("refused:")
    assert ("read-only" in lines[1]) if read_only == "file" else ("cannot write" in lines[1])


def test_a_database_from_a_newer_version_is_refused_by_readers_and_writers(home):
    with open_store() as store:
        with store.transaction() as conn:
            conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'later')")
    for readonly in (False, True):
        with pytest.raises(StoreError, match="newer lessonloop"):
            open_store(readonly=readonly)


def test_an_empty_database_file_is_not_data_and_readers_do_not_touch_it(home):
    home.mkdir(parents=True)
    (home / "lessonloop.db").write_bytes(b"")
    with pytest.raises(NotFoundError):
        open_store(readonly=True)
    assert (home / "lessonloop.db").read_bytes() == b""


def test_migration_3_moves_role_metrics_into_the_call_ledger(home):
    home.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(home / "lessonloop.db", isolation_level=None)
    for version, _, apply in migrations.MIGRATIONS[:2]:  # a database as version 2 left it
        conn.execute("BEGIN")
        if version == 1:
            conn.execute(
                "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, "
                "name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
        apply(conn)
        conn.execute("INSERT INTO schema_migrations VALUES (?, 'old', 'then')", (version,))
        conn.execute("COMMIT")
    conn.execute(
        "INSERT INTO role_metrics (run_id, generation_index, attempt, role, provider, "
        "input_tokens, output_tokens, latency_ms, created_at) "
        "VALUES ('old', 1, 0, 'coach', 'local', NULL, NULL, 1.5, 'then')"
    )
    conn.close()
    with open_store() as store:
        rows = [dict(r) for r in store.query("SELECT * FROM provider_calls")]
        tables = {
            r["name"] for r in store.query("SELECT name FROM sqlite_master WHERE type='table'")
        }
    assert "role_metrics" not in tables
    assert [(r["run_id"], r["role"], r["calls"], r["cost"]) for r in rows] == [
        ("old", "coach", 1, 0.0)
    ]
