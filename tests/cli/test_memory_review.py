"""memory edit/supersede/pin/approve/reject and memorize --review, through the real CLI, the
real store and the real session-start hook."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

from ..conftest import FIXTURES
from ..memory.test_hooks import hook

ANTHROPIC_KEY = "sk-ant-api03-" + "Qm7Zt2Kx9Wv4Lb8Nc3Rf6Hy1Jd5Gs0Pa" * 3 + "-Xy12AA"


def add(cli, summary: str, kind: str = "decision", *extra: str) -> dict:
    result = cli("memory", "add", "--type", kind, "--summary", summary, *extra, "--json")
    assert result.code == 0, result.err
    return result.json()


def _row(root, entry_number: int, scope: str = "project") -> dict:
    with closing(sqlite3.connect(f"file:{root / 'lessonloop.db'}?mode=ro", uri=True)) as db:
        db.row_factory = sqlite3.Row
        row = db.execute(
            "SELECT * FROM knowledge WHERE scope = ? AND number = ?", (scope, entry_number)
        ).fetchone()
        return dict(row)


def _recalled(home) -> str:
    done = hook(home, "session-start", {"session_id": "s1", "source": "startup"})
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    return json.loads(done.stdout).get("hookSpecificOutput", {}).get("additionalContext", "")


def _automatic(home, summary: str) -> int:
    """An automatic memory (as memorize writes them), its number."""
    from lessonloop.knowledge import admission
    from lessonloop.store import open_store

    with open_store(home) as store:
        [outcome] = admission.admit(
            store,
            [
                admission.Proposal(
                    kind="pattern",
                    scope="project",
                    summary=summary,
                    source="session",
                    approved_by="consent",
                    tags=["auto-memorize"],
                )
            ],
            home,
        )
        return store.query_one("SELECT number FROM knowledge WHERE id = ?", (outcome.entry_id,))[0]


def test_edit_makes_the_memory_the_users_redacted_confirmed_and_audited(cli, home):
    number = _automatic(home, "Run pytest with -x to stop at the first failure")
    assert _row(home, number)["author"] == "auto" and _row(home, number)["confirmed_at"] is None
    edited = cli(
        "memory",
        "edit",
        number,
        "--summary",
        "Run pytest with -x -q",
        "--content",
        f"token {ANTHROPIC_KEY} in CI",
        "--json",
    )
    assert edited.code == 0, edited.err
    item = edited.json()
    assert item["action"] == "edited" and item["author"] == "user"
    assert item["summary"] == "Run pytest with -x -q"
    assert ANTHROPIC_KEY not in item["content"] and "[REDACTED" in item["content"]
    row = _row(home, number)
    assert row["author"] == "user" and row["confirmed_at"] and ANTHROPIC_KEY not in row["content"]
    why = cli("memory", "why", number, "--json").json()
    [event] = [e for e in why["events"] if e["action"] == "edit"]
    assert "Run pytest with -x to stop at the first failure" in event["detail"]
    assert "Run pytest with -x -q" in event["detail"] and ANTHROPIC_KEY not in event["detail"]
    assert "Run pytest with -x -q" in (home / "knowledge" / "project" / "knowledge.md").read_text()
    for path in home.rglob("*"):
        if path.is_file():
            assert ANTHROPIC_KEY.encode() not in path.read_bytes(), path
    # now the user's: an automatic rewrite of it is refused
    from lessonloop.knowledge import admission
    from lessonloop.store import open_store

    with open_store(home) as store:
        outcome = admission.update(
            store,
            row["id"],
            admission.Proposal(
                kind="pattern",
                scope="project",
                summary="Something else",
                source="session",
                approved_by="consent",
            ),
        )
    assert outcome.action == "rejected" and "user-authored" in outcome.reason
    unchanged = cli("memory", "edit", number, "--summary", "Run pytest with -x -q", "--json")
    assert unchanged.code == 0 and unchanged.json()["action"] == "unchanged"


def test_edit_errors_are_one_line(cli, home):
    first = add(cli, "Use Postgres 16 for orders")
    second = add(cli, "Deploy on Fridays only with a rollback plan")
    into = cli("memory", "edit", second["id"], "--summary", "use postgres 16 for orders", "--json")
    assert into.code == 2
    message = into.error()["error"]
    assert f"repeats project memory {first['id']}" in message and "Use Postgres 16" in message
    assert _row(home, second["id"])["summary"] == "Deploy on Fridays only with a rollback plan"
    unknown = cli("memory", "edit", 99, "--summary", "x", "--json")
    assert unknown.code == 1 and "no project memory with id 99" in unknown.error()["error"]
    nothing = cli("memory", "edit", first["id"])
    assert nothing.code == 2 and nothing.err.startswith("error: nothing to change")
    assert len(nothing.err.splitlines()) == 1
    empty = cli("memory", "edit", first["id"], "--summary", "   ", "--json")
    assert empty.code == 2 and "empty summary" in empty.error()["error"]
    no_user_store = cli("memory", "edit", 1, "--summary", "x", "--scope", "user", "--json")
    assert no_user_store.code == 1 and "no user memories yet" in no_user_store.error()["error"]
    bad_scope = cli("memory", "edit", 1, "--summary", "x", "--scope", "team", "--json")
    assert bad_scope.code == 2 and "--scope is project or user" in bad_scope.error()["error"]


def test_supersede_takes_the_old_memory_out_of_recall_and_search_and_keeps_its_history(cli, home):
    old = add(cli, "Use Postgres 16 for the orders service")
    new = add(cli, "Use Postgres 17 for the orders service")
    assert "Postgres 16" in _recalled(home)
    done = cli("memory", "supersede", old["id"], "--by", new["id"], "--json")
    assert done.code == 0, done.err
    value = done.json()
    assert value["superseded"]["status"] == "superseded"
    assert value["superseded"]["superseded_by"] == new["id"]
    row = _row(home, old["id"])
    assert row["status"] == "superseded" and row["superseded_by"] == _row(home, new["id"])["id"]
    recalled = _recalled(home)
    assert "Postgres 17" in recalled and "Postgres 16" not in recalled
    found = cli("memory", "search", "postgres orders", "--json").json()
    assert [m["id"] for m in found] == [new["id"]]
    assert [m["id"] for m in cli("memory", "list", "--json").json()] == [new["id"]]
    assert "Postgres 16" not in (home / "knowledge" / "project" / "knowledge.md").read_text()
    why = cli("memory", "why", old["id"])
    assert why.code == 0
    assert why.out.startswith(
        f"[project {old['id']}] (decision) Use Postgres 16 for the orders service "
        f"[superseded by project {new['id']}]\n"
    )
    assert cli("memory", "why", old["id"], "--json").json()["superseded_by"] == new["id"]
    assert f"supersede by {new['id']}: Use Postgres 17 for the orders service" in why.out
    # a repeat of the superseded text is a new lesson, not a reinforcement of the old one
    again = add(cli, "Use Postgres 16 for the orders service")
    assert again["action"] == "added" and again["id"] not in (old["id"], new["id"])


def test_supersede_errors_change_nothing(cli, home, tmp_path):
    old = add(cli, "Use Postgres 16 for orders")
    new = add(cli, "Use Postgres 17 for orders")
    add(cli, "Answer in British English", "preference", "--scope", "user")
    cases = [
        (("--by", "user:1"), 2, "superseded by one of its own scope"),
        (("--by", old["id"]), 2, "cannot supersede itself"),
        (("--by", 42), 1, "no project memory with id 42"),
        (("--by", "soon"), 2, "--by is a memory id"),
    ]
    for args, code, words in cases:
        result = cli("memory", "supersede", old["id"], *args, "--json")
        assert result.code == code, (args, result.err)
        assert words in result.error()["error"], result.err
    unknown = cli("memory", "supersede", 42, "--by", new["id"], "--json")
    assert unknown.code == 1 and "no project memory with id 42" in unknown.error()["error"]
    assert _row(home, old["id"])["status"] == "active"
    assert cli("memory", "supersede", old["id"], "--by", new["id"]).code == 0
    # the replacement must be active: the superseded one cannot replace anything
    third = add(cli, "Use Postgres 18 for orders")
    stale = cli("memory", "supersede", third["id"], "--by", old["id"], "--json")
    assert stale.code == 2 and "is superseded, not active" in stale.error()["error"]
    twice = cli("memory", "supersede", old["id"], "--by", third["id"], "--json")
    assert twice.code == 2 and "already superseded" in twice.error()["error"]
    assert _row(home, third["id"])["status"] == "active"


def test_a_pinned_memory_is_recalled_first_and_survives_prune(cli, home):
    for n in range(5):
        add(cli, f"Decision number {n} about the billing worker", "decision")
    pinned = _automatic(home, "Always run migrations before the worker starts")
    plain = _automatic(home, "Restart the queue consumer after a deploy")
    first_line = [line for line in _recalled(home).splitlines() if line.startswith("- [")][0]
    assert "migrations" not in first_line, "user-authored ones come first before the pin"
    done = cli("memory", "pin", pinned, "--json")
    assert done.code == 0 and done.json()["pinned"] is True and done.json()["action"] == "pinned"
    first_line = [line for line in _recalled(home).splitlines() if line.startswith("- [")][0]
    assert "Always run migrations before the worker starts" in first_line
    listed = cli("memory", "list", "--json").json()
    assert listed[0]["id"] == pinned
    pruned = cli("memory", "prune", "--keep", 0, "--json")
    assert pruned.code == 0 and pruned.json()["pruned"]["project"] == 1  # the unpinned one
    left = {m["id"] for m in cli("memory", "list", "--json").json()}
    assert pinned in left and plain not in left
    again = cli("memory", "pin", pinned, "--json").json()
    assert again["action"] == "unchanged"
    unpinned = cli("memory", "pin", pinned, "--unpin", "--json").json()
    assert unpinned["action"] == "unpinned" and unpinned["pinned"] is False
    assert cli("memory", "prune", "--keep", 0, "--json").json()["pruned"]["project"] == 1
    missing = cli("memory", "pin", 77, "--json")
    assert missing.code == 1 and "no project memory with id 77" in missing.error()["error"]


def test_a_pinned_entry_is_never_retired_automatically(home):
    from lessonloop.knowledge import admission, entries
    from lessonloop.store import open_store

    number = _automatic(home, "Keep the retry budget at three attempts")
    with open_store(home) as store:
        entry = entries.by_number(store, "project", number)
        assert entry is not None
        admission.pin(store, entry.id)
        refused = admission.retire(store, entry.id, "mostly misled")
        assert refused.action == "rejected" and "pinned" in refused.reason
        assert entries.get(store, entry.id).status == "active"
        assert admission.retire(store, entry.id, "the user", by_user=True).action == "retired"


def test_memorize_review_holds_memories_until_approved(cli, home):
    assert cli("memory", "consent", "yes").code == 0
    memorized = cli(
        "memorize",
        "--transcript",
        FIXTURES / "claude-code" / "session_errors.jsonl",
        "--review",
        "--json",
    )
    assert memorized.code == 0, memorized.err
    stored = memorized.json()["stored"]
    assert len(stored) >= 2
    assert cli("memory", "list", "--scope", "project", "--json").json() == []
    assert _recalled(home) == "", "nothing pending is recalled"
    assert (
        cli("memory", "search", stored[0].split()[0], "--scope", "project", "--json").json() == []
    )
    pending = cli("memory", "list", "--pending", "--json").json()
    assert {m["summary"] for m in pending} == set(stored)
    assert all(m["status"] == "pending" for m in pending)
    audit = cli("memory", "audit", "--json").json()
    assert {m["summary"] for m in audit if m.get("status") == "pending"} == set(stored)
    assert "[pending]" in cli("memory", "audit").out

    project = [m for m in pending if m["scope"] == "project"]
    first, rest = project[0], project[1:]
    approved = cli("memory", "approve", first["id"], "--json")
    assert approved.code == 0, approved.err
    [item] = approved.json()["approved"]
    assert item["status"] == "active" and item["confirmed_at"]
    assert first["summary"] in _recalled(home)
    assert [m["id"] for m in cli("memory", "list", "--scope", "project", "--json").json()] == [
        first["id"]
    ]
    why = cli("memory", "why", first["id"], "--json").json()
    assert [e["action"] for e in why["events"]][-1] == "approve"

    twice = cli("memory", "approve", first["id"], "--json")
    assert twice.code == 2 and "is active: only pending, stale or retired" in twice.error()["error"]
    unknown = cli("memory", "reject", 99, "--json")
    assert unknown.code == 1 and "no project memory with id 99" in unknown.error()["error"]
    both = cli("memory", "reject", "--all", "1")
    assert both.code == 2 and "not both" in both.err

    rejected = cli("memory", "reject", "--all", "--json")
    assert rejected.code == 0, rejected.err
    gone = rejected.json()["rejected"]
    assert {m["summary"] for m in gone} == {m["summary"] for m in pending} - {first["summary"]}
    assert all(m["status"] == "rejected" for m in gone)
    assert cli("memory", "list", "--pending", "--json").json() == []
    recalled = _recalled(home)
    assert all(m["summary"] not in recalled for m in rest)
    assert cli("memory", "approve", "--all").out == "no memories held for review\n"


def test_approve_confirms_a_stale_memory(cli, home):
    number = _automatic(home, "Run make lint before committing")
    from lessonloop.store import open_store

    with open_store(home) as store:  # as the freshness check marks it (another module's job)
        store.conn.execute("UPDATE knowledge SET status = 'stale' WHERE number = ?", (number,))
    assert "make lint" not in _recalled(home)
    done = cli("memory", "approve", number, "--json")
    assert done.code == 0, done.err
    assert done.json()["approved"][0]["status"] == "active"
    row = _row(home, number)
    assert row["status"] == "active" and row["confirmed_at"]
    assert "make lint" in _recalled(home)


def test_a_held_repeat_reinforces_the_pending_entry(home):
    from lessonloop.knowledge import admission
    from lessonloop.store import open_store

    def proposal():
        return admission.Proposal(
            kind="preference",
            scope="project",
            summary="Prefer small pull requests",
            source="session",
            approved_by="consent",
        )

    with open_store(home) as store:
        [held] = admission.admit(store, [proposal()], home, hold=True)
        [again] = admission.admit(store, [proposal()], home, hold=True)
        assert held.action == "added" and again.action == "reinforced"
        assert again.entry_id == held.entry_id
        assert store.query_one("SELECT status, seen FROM knowledge")[:] == ("pending", 2)


def test_a_retired_memory_of_the_users_own_is_listed_in_audit_and_approved_back(cli, home):
    """Retired by the user's own verdicts (misled twice), it leaves recall but stays in view:
    `memory audit` lists it (marked), and `memory approve` brings it back with its history."""
    number = add(cli, "Deploy with Fly.io, not Heroku")["id"]
    for _ in range(2):
        assert cli("memory", "feedback", number, "misled").code == 0
    assert cli("memory", "list", "--json").json() == []
    assert "Fly.io" not in _recalled(home)
    audit = cli("memory", "audit", "--json").json()
    assert [(m["id"], m["status"]) for m in audit] == [(number, "retired")]
    assert "[retired]" in cli("memory", "audit").out
    back = cli("memory", "approve", number, "--json")
    assert back.code == 0, back.err
    assert [m["id"] for m in cli("memory", "list", "--json").json()] == [number]
    assert "Fly.io" in _recalled(home)
    row = _row(home, number)
    assert (row["status"], row["harmful"]) == ("active", 2) and row["confirmed_at"]
