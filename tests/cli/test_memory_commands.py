"""memory add/list/search/why/forget/audit/consent/recall/prune through the CLI."""

from __future__ import annotations

import json

FIELDS = {"id", "type", "scope", "summary", "content", "why", "how_to_apply", "tags", "author",
          "source", "seen", "created_at"}


def test_add_list_search_why_forget(cli, home):
    added = cli("memory", "add", "--type", "preference", "--summary", "Use pnpm instead of npm",
                "--why", "faster installs", "--tags", "tooling,js", "--json").json()
    assert set(added) >= FIELDS and added["author"] == "user" and added["source"] == "user"
    cli("memory", "add", "--type", "decision", "--summary", "Use Postgres 16 for the orders service")
    listed = cli("memory", "list", "--json").json()
    assert [m["summary"] for m in listed] == ["Use Postgres 16 for the orders service",
                                              "Use pnpm instead of npm"]  # equals: newest first
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
    again = cli("memory", "add", "--type", "preference", "--summary",
                "run the linter before pushing", "--json").json()
    assert again["action"] == "reinforced" and again["seen"] == 2
    secret = cli("memory", "add", "--type", "observation", "--summary", "Staging token",
                 "--content", "the staging key is sk-ant-api03-" + "x" * 40, "--json").json()
    assert "sk-ant-api03" not in json.dumps(secret) and "[REDACTED:" in secret["content"]


def test_user_scope_lives_in_the_user_root(cli, tmp_path):
    cli("memory", "add", "--type", "preference", "--summary", "Answer in British English",
        "--scope", "user")
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
        admission.admit(store, [admission.Proposal(
            kind="observation", scope="project", summary=summary, source="session",
            approved_by="consent", tags=["auto-memorize"]) for summary in (
                "The billing job retries twice", "Docs build with mkdocs",
                "Fixtures live in tests/data", "CI caches pip wheels", "Logs rotate daily")])
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
    result = cli("memory", "add", "--type", "preference", "--summary", "Use tabs", "--scope", "user",
                 "--json")
    assert result.code == 1 and "check LESSONLOOP_USER_HOME" in result.error()["error"]
