"""playbook list/edit/forget/pin/approve/reject and run --review, through the real CLI, a real
offline run and the real store."""

from __future__ import annotations

import pytest

from lessonloop.knowledge import admission, entries
from lessonloop.store import open_store


@pytest.fixture
def learned(cli, home):
    """A home where an offline run of grid_ctf learned bullets, hints and a dead end."""
    # trials off: every accepted edit is admitted (with trials, edits to hints tie and lose)
    done = cli("run", "grid_ctf", "-n", "3", "--context-trials", "off", "--json")
    assert done.code == 0, done.err
    return done.json()["run_id"]


def listed(cli, *args: str) -> list[dict]:
    result = cli("playbook", "list", *args, "--json")
    assert result.code == 0, result.err
    return result.json()


def test_list_shows_every_kind_with_its_evidence_pin_and_status(cli, home, learned):
    items = listed(cli, "grid_ctf")
    assert {i["kind"] for i in items} == {"bullet", "hint", "dead_end"}
    assert all(i["status"] == "active" and i["pinned"] is False for i in items)
    assert items == listed(cli, "scenario:grid_ctf")
    with open_store() as store:
        numbers = {e.number for e in entries.active(store, "scenario:grid_ctf", ("bullet", "hint"))}
    assert numbers <= {i["id"] for i in items}
    bullet = next(i for i in items if i["kind"] == "bullet")
    text = cli("playbook", "list", "grid_ctf").out
    assert f"[{bullet['id']}] bullet   +{bullet['helpful']}/-{bullet['harmful']}" in text


def test_scope_and_id_errors_are_one_line(cli, home, learned):
    nothing = cli("playbook", "list", "chess", "--json")
    assert nothing.code == 1
    assert "no playbook entries in scenario:chess" in nothing.error()["error"]
    assert "scenario:grid_ctf" in nothing.error()["error"], "names the scopes there are"
    memories = cli("playbook", "list", "project", "--json")
    assert memories.code == 2 and "lessonloop memory" in memories.error()["error"]
    odd = cli("playbook", "list", "team:x", "--json")
    assert odd.code == 2 and "task:NAME or evolve:NAME" in odd.error()["error"]
    for verb, extra in (("edit", ("--summary", "x")), ("forget", ()), ("pin", ())):
        missing = cli("playbook", verb, "grid_ctf", 999, *extra, "--json")
        assert missing.code == 1, (verb, missing.err)
        assert "no playbook entry 999 in scenario:grid_ctf" in missing.error()["error"]
    text = cli("playbook", "forget", "grid_ctf", 999)
    assert text.err.startswith("error: ") and len(text.err.splitlines()) == 1


def test_a_fresh_home_has_no_playbook(cli, home):
    result = cli("playbook", "pin", "grid_ctf", 1, "--json")
    assert result.code == 1 and "no knowledge yet" in result.error()["error"]
    assert not (home / "lessonloop.db").exists(), "a failed command creates nothing"


def test_edit_makes_an_entry_the_users_and_dedupes(cli, home, learned):
    bullets = [i for i in listed(cli, "grid_ctf") if i["kind"] == "bullet"]
    first, second = bullets[0], bullets[1]
    done = cli(
        "playbook",
        "edit",
        "grid_ctf",
        first["id"],
        "--summary",
        "Keep stealth near 0.6 against this opponent",
        "--json",
    )
    assert done.code == 0, done.err
    item = done.json()
    assert item["action"] == "edited" and item["author"] == "user"
    playbook = (home / "knowledge" / "grid_ctf" / "playbook.md").read_text()
    assert "Keep stealth near 0.6 against this opponent" in playbook
    assert first["summary"] not in playbook
    # same words and tags as another entry: refused, naming it (tags tell lessons apart, so
    # the same words with other tags are another lesson)
    with open_store() as store:
        outcomes = admission.admit(
            store,
            [
                admission.Proposal(
                    kind="hint", scope="scenario:grid_ctf", summary=text, source="evidence"
                )
                for text in ("Probe the flanks early", "Hold the centre late")
            ],
        )
        one, other = (
            store.query_one("SELECT number FROM knowledge WHERE id = ?", (o.entry_id,))[0]
            for o in outcomes
        )
    into = cli(
        "playbook", "edit", "grid_ctf", other, "--summary", "probe the FLANKS early", "--json"
    )
    assert into.code == 2 and f"repeats entry {one} of scenario:grid_ctf" in into.error()["error"]
    assert "Hold the centre late" in (home / "knowledge" / "grid_ctf" / "hints.md").read_text()
    retagged = cli(
        "playbook", "edit", "grid_ctf", second["id"], "--summary", item["summary"], "--json"
    )
    assert retagged.code == 0 and retagged.json()["tags"] != item["tags"]
    with open_store() as store:
        entry = entries.by_number(store, "scenario:grid_ctf", first["id"])
        assert entry is not None
        refused = admission.retire(store, entry.id, "coach: drop it", scope=entry.scope)
    assert refused.action == "rejected", "the coach never retires what the user wrote"


def test_forget_deletes_an_entry_and_its_line(cli, home, learned):
    dead_end = next(i for i in listed(cli, "grid_ctf") if i["kind"] == "dead_end")
    gone = cli("playbook", "forget", "grid_ctf", dead_end["id"], "--json")
    assert gone.code == 0, gone.err
    assert gone.json()["forgotten"] == dead_end["id"] and gone.json()["kind"] == "dead_end"
    assert dead_end["id"] not in [i["id"] for i in listed(cli, "grid_ctf", "--all")]
    assert dead_end["summary"] not in (home / "knowledge" / "grid_ctf" / "dead_ends.md").read_text()


def test_a_pinned_bullet_is_never_retired_to_a_dead_end(cli, home, learned):
    bullets = [i for i in listed(cli, "grid_ctf") if i["kind"] == "bullet"][:2]
    pinned, plain = bullets
    done = cli("playbook", "pin", "grid_ctf", pinned["id"], "--json")
    assert done.code == 0 and done.json()["pinned"] is True
    with open_store() as store:
        ids = [entries.by_number(store, "scenario:grid_ctf", b["id"]).id for b in bullets]
        retired = []
        for generation in range(admission.RETIRE_MIN_OUTCOMES):  # as a run records rollbacks
            retired += admission.record_evidence(
                store, ids, False, run_id=learned, generation_index=100 + generation
            )
        coach = admission.retire(store, ids[0], "coach: remove", kind="bullet")
    assert retired == [ids[1]], "only the unpinned bullet became a dead end"
    assert coach.action == "rejected" and "pinned" in coach.reason
    after = {i["id"]: i for i in listed(cli, "grid_ctf")}
    assert after[pinned["id"]]["kind"] == "bullet" and after[pinned["id"]]["harmful"] >= 6
    assert after[plain["id"]]["kind"] == "dead_end"
    lines = cli("playbook", "list", "grid_ctf").out.splitlines()
    [line] = [line for line in lines if line.startswith(f"[{pinned['id']}] ")]
    assert (
        line.startswith(f"[{pinned['id']}] bullet   +{pinned['helpful']}/-") and " pinned " in line
    )
    unpinned = cli("playbook", "pin", "grid_ctf", pinned["id"], "--unpin", "--json").json()
    assert unpinned["pinned"] is False and unpinned["action"] == "unpinned"


def test_a_review_run_holds_what_it_learns_until_approved(cli, home):
    done = cli("run", "grid_ctf", "-n", "3", "--review", "--json")
    assert done.code == 0, done.err
    held = listed(cli, "grid_ctf")
    assert held and all(i["status"] == "pending" for i in held)
    assert "(none yet)" in (home / "knowledge" / "grid_ctf" / "playbook.md").read_text()
    with open_store() as store:
        assert entries.active(store, "scenario:grid_ctf") == [], "nothing served while pending"
    bullets = [i for i in held if i["kind"] == "bullet"]
    approved = cli("playbook", "approve", "grid_ctf", bullets[0]["id"], "--json")
    assert approved.code == 0, approved.err
    assert approved.json()["approved"][0]["status"] == "active"
    assert bullets[0]["summary"] in (home / "knowledge" / "grid_ctf" / "playbook.md").read_text()
    again = cli("playbook", "approve", "grid_ctf", bullets[0]["id"], "--json")
    assert again.code == 2 and "is active" in again.error()["error"]
    rejected = cli("playbook", "reject", "grid_ctf", "--all", "--json").json()["rejected"]
    assert len(rejected) == len(held) - 1 and all(i["status"] == "rejected" for i in rejected)
    assert [i["id"] for i in listed(cli, "grid_ctf")] == [bullets[0]["id"]]
    assert len(listed(cli, "grid_ctf", "--all")) == len(held)
    # a run created with --review keeps it: the flag cannot change on resume
    run_id = done.json()["run_id"]
    conflict = cli("run", "grid_ctf", "--run-id", run_id, "-n", "4", "--json")
    assert conflict.code == 0, "no flag given: the run continues with its own settings"
    assert all(i["status"] in ("pending", "active") for i in listed(cli, "grid_ctf")) and any(
        i["status"] == "pending" for i in listed(cli, "grid_ctf")
    )


def test_task_scopes_are_named_as_tasks(cli, home):
    with open_store() as store:
        admission.admit(
            store,
            [
                admission.Proposal(
                    kind="bullet",
                    scope="task:support-reply",
                    summary="Name the order id in the first line",
                    source="evidence",
                )
            ],
        )
    for name in ("task:support-reply", "task:Support Reply"):
        [item] = listed(cli, name)
        assert item["summary"] == "Name the order id in the first line"


def test_an_improve_run_with_review_holds_its_lessons(cli, tmp_path, home):
    from .test_task_commands import BAD_SQL, EXAMPLES, GOOD_SQL, fenced, script

    provider = script(tmp_path, competitor=[fenced(BAD_SQL), fenced(GOOD_SQL), fenced(GOOD_SQL)])
    task = EXAMPLES / "sql-top-customers.yaml"
    done = cli("improve", task, "--provider", provider, "--run-id", "sql1", "--review")
    assert done.code == 0, done.err
    held = listed(cli, "task:sql-top-customers")
    kinds = {i["kind"] for i in held}
    assert kinds == {"bullet", "dead_end"} and all(i["status"] == "pending" for i in held)
    playbook = home / "knowledge" / "task-sql-top-customers" / "playbook.md"
    assert "Best output so far" not in playbook.read_text()
    approved = cli("playbook", "approve", "task:sql-top-customers", "--all", "--json")
    assert approved.code == 0 and len(approved.json()["approved"]) == len(held)
    assert "Best output so far scored 1.00" in playbook.read_text()
    plain = script(tmp_path, "plain.json", competitor=[fenced(GOOD_SQL)])
    assert cli("improve", task, "--provider", plain, "--run-id", "sql2").code == 0
    conflict = cli("improve", task, "--provider", plain, "--run-id", "sql2", "--review", "--json")
    assert conflict.code == 2 and "drop --review" in conflict.error()["error"]
