"""A run's kind is a column (migration 11), not read from its scenario name."""

import sqlite3

from lessonloop.store import migrations


def test_the_migration_gives_older_runs_their_kind_from_the_name_they_had(tmp_path):
    with sqlite3.connect(tmp_path / "old.db") as conn:
        for _, _, step in migrations.MIGRATIONS[:10]:
            step(conn)
        for run_id, scenario in (("a", "grid_ctf"), ("b", "task:support-reply"), ("c", "x:y")):
            conn.execute(
                "INSERT INTO runs (run_id, scenario, scenario_ref, target_generations, status, "
                "provider, seed, config_json, created_at, updated_at) "
                "VALUES (?, ?, ?, 1, 'created', 'local', 0, '{}', 't', 't')",
                (run_id, scenario, scenario),
            )
        migrations.MIGRATIONS[10][2](conn)
        kinds = conn.execute("SELECT run_id, kind FROM runs ORDER BY run_id").fetchall()
    assert kinds == [("a", "scenario"), ("b", "task"), ("c", "scenario")]


def test_new_runs_are_written_with_their_kind(cli, home):
    """A scenario run from the CLI; an improve run's kind is what resumes it as rounds (its
    resume is tested in tests/cli/test_task_commands.py)."""
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    assert cli("run", "grid_ctf", "--iterations", "1", "--run-id", "s1", "--json").code == 0
    with open_store(home) as store:
        run_store.create_run(
            store,
            run_id="t1",
            scenario="task:x",
            scenario_ref="x.yaml",
            target_generations=1,
            provider="local",
            seed=0,
            config={},
            kind="task",
        )
        assert run_store.find_run(store, "s1")["kind"] == "scenario"
        assert run_store.find_run(store, "t1")["kind"] == "task"
