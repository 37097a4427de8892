"""memory add/list/search/why/forget/audit/consent/recall/prune through the CLI."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing

from ..conftest import FIXTURES

FIELDS = {
    "id",
    "type",
    "scope",
    "summary",
    "content",
    "why",
    "how_to_apply",
    "tags",
    "author",
    "source",
    "seen",
    "created_at",
}


def test_add_list_search_why_forget(cli, home):
    added = cli(
        "memory",
        "add",
        "--type",
        "preference",
        "--summary",
        "Use pnpm instead of npm",
        "--why",
        "faster installs",
        "--tags",
        "tooling,js",
        "--json",
    ).json()
    assert set(added) >= FIELDS and added["author"] == "user" and added["source"] == "user"
    cli(
        "memory", "add", "--type", "decision", "--summary", "Use Postgres 16 for the orders service"
    )
    listed = cli("memory", "list", "--json").json()
    assert [m["summary"] for m in listed] == [
        "Use Postgres 16 for the orders service",
        "Use pnpm instead of npm",
    ]  # equals: newest first
    assert all(set(m) >= FIELDS for m in listed)
    found = cli("memory", "search", "pnpm", "--json").json()
    assert found[0]["summary"] == "Use pnpm instead of npm" and found[0]["score"] > 0
    assert cli("memory", "search", "kubernetes", "--json").json() == []
    why = cli("memory", "why", added["id"], "--json").json()
    assert why["provenance"][0]["source"] == "user" and why["events"][0]["action"] == "add"
    assert "pnpm" in (home / "knowledge" / "project" / "knowledge.md").read_text()
    gone = cli("memory", "forget", added["id"], "--json").json()
    assert gone["forgotten"] == added["id"]
    assert "pnpm" not in (home / "knowledge" / "project" / "knowledge.md").read_text()
    missing = cli("memory", "forget", added["id"], "--json")
    assert missing.code == 1 and "no project memory" in missing.error()["error"]


def test_a_duplicate_reinforces_and_a_secret_is_redacted(cli):
    cli("memory", "add", "--type", "preference", "--summary", "Run the linter before pushing")
    again = cli(
        "memory",
        "add",
        "--type",
        "preference",
        "--summary",
        "run the linter before pushing",
        "--json",
    ).json()
    assert again["action"] == "reinforced" and again["seen"] == 2
    secret = cli(
        "memory",
        "add",
        "--type",
        "observation",
        "--summary",
        "Staging token",
        "--content",
        "the staging key is sk-ant-api03-" + "x" * 40,
        "--json",
    ).json()
    assert "sk-ant-api03" not in json.dumps(secret) and "[REDACTED:" in secret["content"]


def test_user_scope_lives_in_the_user_root(cli, tmp_path):
    cli(
        "memory",
        "add",
        "--type",
        "preference",
        "--summary",
        "Answer in British English",
        "--scope",
        "user",
    )
    user = cli("memory", "list", "--scope", "user", "--json").json()
    assert [m["scope"] for m in user] == ["user"]
    assert cli("memory", "list", "--scope", "project", "--json").json() == []
    assert (tmp_path / "user-home" / "lessonloop.db").exists()
    assert "British English" in cli("memory", "recall").out


def test_bad_arguments_are_one_line(cli):
    assert cli("memory", "add", "--type", "rumour", "--summary", "x", "--json").code == 2
    assert cli("memory", "consent", "maybe", "--json").code == 2
    assert cli("memory", "list", "--scope", "galaxy", "--json").code == 2
    assert cli("memory", "list", "--json").json() == []


def test_consent_is_recorded(cli, home):
    assert cli("memory", "consent", "yes", "--json").json()["consent"] == "yes"
    assert json.loads((home / "automem-consent.json").read_text())["consented"] is True
    cli("memory", "consent", "ask")
    assert json.loads((home / "automem-consent.json").read_text())["consented"] == "ask"


def test_prune_keeps_user_authored_and_caps_automatic(cli, home):
    from lessonloop.knowledge import admission
    from lessonloop.store import open_store

    with open_store() as store:
        admission.admit(
            store,
            [
                admission.Proposal(
                    kind="observation",
                    scope="project",
                    summary=summary,
                    source="session",
                    approved_by="consent",
                    tags=["auto-memorize"],
                )
                for summary in (
                    "The billing job retries twice",
                    "Docs build with mkdocs",
                    "Fixtures live in tests/data",
                    "CI caches pip wheels",
                    "Logs rotate daily",
                )
            ],
        )
    cli("memory", "add", "--type", "decision", "--summary", "Keep the public API stable")
    pruned = cli("memory", "prune", "--keep", 3, "--json").json()
    assert pruned["pruned"]["project"] == 3
    remaining = cli("memory", "list", "--json").json()
    assert len(remaining) == 3 and any(m["author"] == "user" for m in remaining)
    assert cli("memory", "prune", "--older-than", 0, "--json").json()["pruned"]["project"] == 2


def test_a_user_root_that_is_a_file_names_its_own_variable(cli, home, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("LESSONLOOP_USER_HOME", str(blocker))
    result = cli(
        "memory",
        "add",
        "--type",
        "preference",
        "--summary",
        "Use tabs",
        "--scope",
        "user",
        "--json",
    )
    assert result.code == 1 and "check LESSONLOOP_USER_HOME" in result.error()["error"]


def test_memorize_names_a_session_it_does_not_know_and_a_transcript_that_is_a_folder(
    cli, home, tmp_path
):
    cli("memory", "consent", "yes")
    unknown = cli("memorize", "--session-id", "nosuch", "--json")
    assert unknown.code == 1 and "no session 'nosuch'" in unknown.error()["error"]
    assert "--transcript" in unknown.error()["error"]
    folder = tmp_path / "transcripts"
    folder.mkdir()
    given = cli("memorize", "--transcript", folder)
    assert given.code == 2
    assert given.err == (
        f"error: --transcript takes a session's .jsonl file; {folder} is a directory\n"
    )
    assert not (home / "sessions" / "nosuch").exists(), "an unknown session leaves no folder"


# --- audit, uninstall, prune's VACUUM, doctor's integrity check --------------------------------

AUDIT_LINE = re.compile(r"^\[(project|user) (\d+)\] \((\w+)\) (.+)  — (\w+), seen (\d+)$")


def _audit(cli, *args) -> list[dict]:
    result = cli("memory", "audit", *args, "--json")
    assert result.code == 0, result.err
    return result.json()


def _knowledge_events(root, entry_id: int) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(f"file:{root / 'lessonloop.db'}?mode=ro", uri=True)) as db:
        return db.execute(
            "SELECT action, detail FROM knowledge_events WHERE knowledge_id = ? ORDER BY id",
            (entry_id,),
        ).fetchall()


def test_audit_lists_automatic_memories_newest_first_and_forget_removes_one(cli, home):
    assert cli("memory", "consent", "yes").code == 0
    memorized = cli(
        "memorize", "--transcript", FIXTURES / "claude-code" / "session_errors.jsonl", "--json"
    )
    assert memorized.code == 0, memorized.err
    stored = memorized.json()["stored"]
    assert len(stored) >= 2, "the fixture session teaches several lessons"
    mine = cli(
        "memory",
        "add",
        "--type",
        "decision",
        "--summary",
        "Release notes go in CHANGELOG.md",
        "--json",
    ).json()

    audited = _audit(cli)
    assert all(set(m) >= FIELDS for m in audited)
    project = [m for m in audited if m["scope"] == "project"]
    assert sorted(m["summary"] for m in project) == sorted(stored), "every automatic memory, once"
    assert {m["summary"] for m in audited} == set(stored), "user-scope ones are among them"
    assert all(
        m["author"] == "auto" and m["source"] == "session" and "auto-memorize" in m["tags"]
        for m in audited
    )
    assert mine["id"] not in [m["id"] for m in audited if m["scope"] == "project"], (
        "what the user wrote is not up for review"
    )
    order = [(m["created_at"], m["id"]) for m in audited]
    assert order == sorted(order, reverse=True), "newest first"
    assert _audit(cli, "--limit", 2) == audited[:2]

    text = cli("memory", "audit")
    assert text.code == 0
    lines = text.out.splitlines()
    assert len(lines) == len(audited)
    for line, item in zip(lines, audited):
        match = AUDIT_LINE.match(line)
        assert match, line
        assert match.groups() == (
            item["scope"],
            str(item["id"]),
            item["type"],
            item["summary"],
            "auto",
            str(item["seen"]),
        )

    target = next(m for m in audited if m["scope"] == "project")
    gone = cli("memory", "forget", target["id"], "--json")
    assert gone.code == 0 and gone.json()["forgotten"] == target["id"]
    after = _audit(cli)
    assert [(m["scope"], m["id"]) for m in after] == [
        (m["scope"], m["id"]) for m in audited if m is not target
    ]
    assert target["id"] not in [
        m["id"] for m in cli("memory", "list", "--scope", "project", "--json").json()
    ]
    assert mine["id"] in [m["id"] for m in cli("memory", "list", "--json").json()]
    # the audit trail keeps a note that it was added and forgotten, without its text
    events = _knowledge_events(home, target["id"])
    assert events[0][0] == "add" and events[-1][0] == "forget"
    assert not any(target["summary"] in detail for _, detail in events)
    assert cli("memory", "why", target["id"], "--json").code == 1

    for m in after:
        assert cli("memory", "forget", m["id"], "--scope", m["scope"]).code == 0
    assert _audit(cli) == []
    assert cli("memory", "audit").out == "no automatic memories\n"


def test_uninstall_claude_code_leaves_memories_in_place(cli, home, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(tmp_path / "os-home"))
    cli("memory", "add", "--type", "decision", "--summary", "Keep database migrations reversible")
    cli(
        "memory",
        "add",
        "--type",
        "preference",
        "--summary",
        "Explain diffs before applying them",
        "--scope",
        "user",
    )
    before = cli("memory", "list", "--json").json()
    assert len(before) == 2
    settings = project / ".claude" / "settings.json"
    user_settings = tmp_path / "os-home" / ".claude" / "settings.json"

    assert cli("install", "claude-code").code == 0
    assert cli("install", "claude-code", "--scope", "user").code == 0
    assert (
        "lessonloop hook" in settings.read_text() and "lessonloop hook" in user_settings.read_text()
    )
    removed = cli("uninstall", "claude-code", "--json")
    assert removed.code == 0 and "SessionEnd" in removed.json()["removed"]
    assert cli("uninstall", "claude-code", "--scope", "user").code == 0
    assert "lessonloop hook" not in settings.read_text()
    assert "lessonloop hook" not in user_settings.read_text()

    assert cli("memory", "list", "--json").json() == before
    assert "migrations reversible" in (home / "knowledge" / "project" / "knowledge.md").read_text()
    recalled = cli("memory", "recall").out
    assert "migrations reversible" in recalled and "Explain diffs" in recalled
    assert (
        cli("memory", "search", "migrations", "--json").json()[0]["summary"]
        == "Keep database migrations reversible"
    )


def _pages(db) -> dict:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return {
            name: conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("page_count", "freelist_count")
        }


def _admit_bulky_memories(count: int) -> None:
    import random

    from lessonloop.knowledge import admission
    from lessonloop.store import open_store

    rng = random.Random(11)
    vocabulary = [f"w{n:04d}" for n in range(3000)]
    with open_store() as store:
        outcomes = admission.admit(
            store,
            [
                admission.Proposal(
                    kind="observation",
                    scope="project",
                    summary=f"Observation {n}: " + " ".join(rng.sample(vocabulary, 6)),
                    content=" ".join(rng.sample(vocabulary, 600)),
                    source="session",
                    approved_by="consent",
                    tags=["auto-memorize"],
                )
                for n in range(count)
            ],
        )
    assert [o.action for o in outcomes] == ["added"] * count, "distinct enough not to merge"


def _bytes_on_disk(db) -> int:
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


def test_prune_vacuums_the_store(cli, home):
    _admit_bulky_memories(60)
    cli("memory", "add", "--type", "decision", "--summary", "Keep the public API stable")
    assert len(cli("memory", "list", "--json").json()) == 61  # a reader stays open in-process
    db = home / "lessonloop.db"
    before = _pages(db)

    pruned = cli("memory", "prune", "--keep", 1, "--json")
    assert pruned.code == 0, pruned.err
    assert pruned.json()["pruned"]["project"] == 60
    after = _pages(db)
    assert after["freelist_count"] == 0, "VACUUM leaves no free pages behind"
    # 60 entries of ~3.6 KB each (and their full-text index) gave their pages back
    assert after["page_count"] <= before["page_count"] - 40, (before, after)
    assert [m["summary"] for m in cli("memory", "list", "--json").json()] == [
        "Keep the public API stable"
    ]
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_prune_leaves_a_smaller_file_even_while_another_connection_reads(cli, home):
    """An idle reader (the MCP server, a session-start hook) must not turn VACUUM into growth:
    in WAL mode VACUUM rewrites the database into the WAL, and only a checkpoint shrinks it."""
    _admit_bulky_memories(60)
    db = home / "lessonloop.db"
    with closing(sqlite3.connect(db)) as setup:
        setup.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _bytes_on_disk(db)
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert reader.execute("SELECT COUNT(*) FROM knowledge").fetchone()[0] == 60
        pruned = cli("memory", "prune", "--keep", 0, "--json")
        assert pruned.code == 0, pruned.err
        assert pruned.json()["pruned"]["project"] == 60
        assert reader.execute("SELECT COUNT(*) FROM knowledge").fetchone()[0] == 0
        after = _bytes_on_disk(db)
        assert after < before, f"prune grew the store on disk: {before} -> {after} bytes"
        assert db.stat().st_size < before, "the database file itself shrinks"
    finally:
        reader.close()


def _corrupt_a_page(db) -> None:
    """Break one b-tree page of a valid database (its header's first freeblock offset), so the
    file still opens but its integrity check fails."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'knowledge'"
        ).fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    offset = (root - 1) * size
    data[offset + 1 : offset + 3] = (size - 96).to_bytes(2, "big")
    db.write_bytes(bytes(data))


def test_doctor_reports_store_integrity_ok_or_failed_in_one_line(cli, home):
    cli("memory", "add", "--type", "decision", "--summary", "Ship small pull requests")
    healthy = cli("doctor", "--json")
    assert healthy.code == 0, healthy.out
    assert healthy.json()["store"] == {
        "path": str(home / "lessonloop.db"),
        "ok": True,
        "detail": "integrity ok",
    }
    assert healthy.json()["ok"] is True
    text = cli("doctor")
    assert text.code == 0
    assert re.search(r"^store: ok\s+\S+lessonloop\.db: integrity ok$", text.out, re.M)

    _corrupt_a_page(home / "lessonloop.db")
    broken = cli("doctor", "--json")
    assert broken.code == 1 and "Traceback" not in broken.err
    report = broken.json()
    assert report["ok"] is False and report["store"]["ok"] is False
    assert report["store"]["detail"].startswith("integrity check failed")
    assert "\n" not in report["store"]["detail"], "one line, even for a multi-line verdict"
    assert "Page" in report["store"]["detail"], "the verdict names what is broken"
    plain = cli("doctor")
    assert plain.code == 1 and "Traceback" not in plain.err
    lines = plain.out.splitlines()
    store_line = [line for line in lines if line.startswith("store: ")]
    assert len(store_line) == 1 and "FAIL" in store_line[0]
    assert "integrity check failed" in store_line[0] and "Page" in store_line[0]
    headings = ("config:", "offline mode:", "routes:", "endpoints:", "store:", "user store:")
    assert all(line.startswith(("  ", *headings)) for line in lines), (
        f"every line of the report is a heading or an indented item: {lines}"
    )


def test_doctor_names_a_database_that_is_not_one_without_a_traceback(run_cli, home):
    home.mkdir(parents=True)
    (home / "lessonloop.db").write_bytes(b"\0garbage" * 512)
    for args in (("doctor",), ("doctor", "--json")):
        result = run_cli(*args)
        assert result.code == 1, result.out
        assert "Traceback" not in result.err and "Traceback" not in result.out
    report = json.loads(run_cli("doctor", "--json").out)
    assert report["store"]["ok"] is False and "corrupt" in report["store"]["detail"]
    assert report["user_store"]["ok"] is True
    line = [x for x in run_cli("doctor").out.splitlines() if x.startswith("store: ")]
    assert len(line) == 1 and "FAIL" in line[0] and "corrupt" in line[0]
    assert (home / "lessonloop.db").read_bytes() == b"\0garbage" * 512, "doctor changes nothing"


def test_a_home_that_is_a_file_is_named_as_such_by_doctor_and_run(run_cli, home):
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("")
    for args in (("doctor",), ("doctor", "--json"), ("run", "grid_ctf", "-n", "1")):
        result = run_cli(*args)
        assert result.code == 1, (args, result.err)
        line = result.err.strip()
        assert "Traceback" not in line and "\n" not in line
        assert f"the lessonloop home {home} is not a directory" in line, line
        assert "LESSONLOOP_HOME" in line and "config.toml" not in line


def test_a_fresh_homes_first_memory_is_1_after_a_run_wrote_its_playbook(cli, home):
    """Memories are numbered within their scope: a run's playbook bullets (in the scenario's
    scope) do not push the first memory's id to 99."""
    assert cli("run", "grid_ctf", "--iterations", "3", "--json").code == 0
    import sqlite3

    with sqlite3.connect(home / "lessonloop.db") as conn:
        bullets = conn.execute("SELECT COUNT(*) FROM knowledge WHERE scope != 'project'")
        assert bullets.fetchone()[0] > 0, "the run wrote playbook bullets first"
    first = cli("memory", "add", "--type", "decision", "--summary", "Ship on Fridays", "--json")
    second = cli("memory", "add", "--type", "decision", "--summary", "Review every PR", "--json")
    assert (first.json()["id"], second.json()["id"]) == (1, 2)
    assert "[1] Ship on Fridays" in (home / "knowledge" / "project" / "knowledge.md").read_text()
    assert cli("memory", "why", "2", "--json").json()["summary"] == "Review every PR"
    assert cli("memory", "forget", "1", "--json").json()["summary"] == "Ship on Fridays"
    assert [m["id"] for m in cli("memory", "list", "--json").json()] == [2]


def test_the_migration_numbers_the_memories_an_older_store_already_has(tmp_path):
    """A store from before migration 10: its memories get their numbers in the order they
    were added, per scope, whatever ids the playbook took."""
    import sqlite3

    from lessonloop.store import migrations

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        for version, _, step in migrations.MIGRATIONS[:9]:
            step(conn)
        rows = [
            ("playbook", "grid_ctf"),
            ("decision", "project"),
            ("playbook", "grid_ctf"),
            ("preference", "project"),
            ("preference", "user"),
        ]
        for kind, scope in rows:
            conn.execute(
                "INSERT INTO knowledge (kind, scope, summary, fingerprint, created_at, updated_at)"
                " VALUES (?, ?, 's', ?, 't', 't')",
                (kind, scope, f"{kind}-{scope}-{len(rows)}"),
            )
        migrations.MIGRATIONS[9][2](conn)
        numbered = conn.execute("SELECT id, scope, number FROM knowledge ORDER BY id").fetchall()
    assert numbered == [
        (1, "grid_ctf", 1),
        (2, "project", 1),
        (3, "grid_ctf", 2),
        (4, "project", 2),
        (5, "user", 1),
    ]
