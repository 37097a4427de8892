"""`knowledge export` / `knowledge import` through the real CLI and real stores: a round trip
into a fresh home (twice) gives the same entries once, a repeat reinforces (evidence merged by
maximum), a user's own entry is never overwritten, secrets never reach the file, and a bad
file is refused whole with the line at fault named."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest

from lessonloop.knowledge import admission
from lessonloop.knowledge.admission import Proposal
from lessonloop.store import open_store

GITHUB_TOKEN = "ghp_" + "R8kq2Lm9Xw4Tz7Vb1Nc6Hd3Jf5Gs0Pa8Yu2E"
AWS_KEY = "AKIA" + "Q7ZV4KX2MB9TLW3R"


def admit(root, *proposals):
    with open_store(root) as store:
        return admission.admit(store, list(proposals), root)


def memory(summary, kind="preference", author="auto", **extra):
    source = "user" if author == "user" else "mcp"
    return Proposal(kind=kind, scope="project", summary=summary, author=author, source=source,
                    **extra)  # fmt: skip


def bullet(summary, **extra):
    return Proposal(kind="bullet", scope="scenario:grid_ctf", summary=summary,
                    approved_by="accept", run_id="r1", generation_index=2, **extra)  # fmt: skip


def rows(root):
    """Every knowledge row as the fields an import must carry, sorted."""
    with closing(sqlite3.connect(root / "lessonloop.db")) as conn:
        conn.row_factory = sqlite3.Row
        found = conn.execute(
            "SELECT kind, scope, summary, content, why, how_to_apply, tags_json, author, "
            "status, helpful, harmful, seen, pinned FROM knowledge ORDER BY scope, summary"
        ).fetchall()
    return [tuple(row) for row in found]


def set_counts(root, summary, **counts):
    """Evidence as the runs and sessions would have left it (the test plants it directly)."""
    with closing(sqlite3.connect(root / "lessonloop.db")) as conn, conn:
        sets = ", ".join(f"{name} = ?" for name in counts)
        conn.execute(f"UPDATE knowledge SET {sets} WHERE summary = ?", (*counts.values(), summary))


@pytest.fixture
def lived_in(home):
    admit(
        home,
        memory("Use pnpm instead of npm", author="user", why="faster installs", tags=["js"]),
        memory("Run migrations before the tests", kind="pattern", content="error: no table"),
        bullet("Raise stealth above 0.6 on open maps", tags=["stealth"]),
        Proposal(
            kind="hint",
            scope="scenario:grid_ctf",
            summary="Try a wider defense radius",
            approved_by="accept",
        ),  # fmt: skip
    )
    set_counts(home, "Raise stealth above 0.6 on open maps", helpful=4, harmful=1, seen=3)
    set_counts(home, "Run migrations before the tests", helpful=2, pinned=1)
    return home


def other_home(tmp_path, monkeypatch, name="teammate"):
    root = tmp_path / name
    monkeypatch.setenv("LESSONLOOP_HOME", str(root))
    return root


def test_export_then_import_into_a_fresh_home_twice_gives_the_same_entries_once(
    cli, lived_in, tmp_path, monkeypatch
):
    out = tmp_path / "team.jsonl"
    written = cli("knowledge", "export", "-o", out, "--json")
    assert written.code == 0 and written.json()["entries"] == 4
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["format"] == "lessonloop-knowledge" and lines[0]["version"] == 1
    assert lines[0]["entries"] == 4 and lines[0]["exported_at"]
    stealth = next(line for line in lines[1:] if line["summary"].startswith("Raise stealth"))
    assert (stealth["helpful"], stealth["harmful"], stealth["seen"]) == (4, 1, 3)
    assert stealth["provenance"][0]["run_id"] == "r1" and len(stealth["fingerprint"]) == 32
    original = rows(lived_in)

    fresh = other_home(tmp_path, monkeypatch)
    first = cli("knowledge", "import", out, "--json").json()
    assert (first["added"], first["reinforced"], first["unchanged"]) == (4, 0, 0)
    assert rows(fresh) == original  # text, author, status, evidence and pins carried over
    second = cli("knowledge", "import", out, "--json").json()
    assert (second["added"], second["reinforced"], second["unchanged"]) == (0, 0, 4)
    assert rows(fresh) == original
    why = cli("memory", "why", "1", "--json").json()
    assert [origin["source"] for origin in why["provenance"]] == ["import"]
    detail = json.loads(why["provenance"][0]["detail"])
    assert detail["file"] == "team.jsonl" and detail["provenance"][0]["source"] == "user"
    assert "pnpm" in (fresh / "knowledge" / "project" / "knowledge.md").read_text()
    # the same entries under another file name: reinforced, still once, nothing inflated
    again = tmp_path / "renamed.jsonl"
    again.write_text(out.read_text())
    third = cli("knowledge", "import", again, "--json").json()
    assert (third["added"], third["reinforced"]) == (0, 4)
    assert rows(fresh) == original


def test_a_repeat_reinforces_and_evidence_merges_by_maximum(cli, lived_in, tmp_path, monkeypatch):
    out = tmp_path / "mine.jsonl"
    cli("knowledge", "export", "--scope", "grid_ctf", "-o", out)
    theirs = other_home(tmp_path, monkeypatch)
    admit(theirs, bullet("raise stealth above 0.6 on open maps", tags=["stealth"]))
    set_counts(theirs, "raise stealth above 0.6 on open maps", helpful=1, harmful=3, seen=7)
    report = cli("knowledge", "import", out, "--json").json()
    assert (report["added"], report["reinforced"]) == (1, 1)  # the hint is new
    (kind, _, summary, *_, helpful, harmful, seen, _) = next(
        row for row in rows(theirs) if row[0] == "bullet"
    )
    assert summary == "raise stealth above 0.6 on open maps"  # the existing text stays
    assert (helpful, harmful, seen) == (4, 3, 7)  # max of 4/1/3 and 1/3/7: never a sum
    assert len([row for row in rows(theirs) if row[0] == "bullet"]) == 1


def test_a_users_own_entry_is_never_overwritten_by_an_imported_one(cli, home, tmp_path):
    cli("memory", "add", "--type", "preference", "--summary", "Indent YAML with two spaces",
        "--content", "my own words", "--why", "house style")  # fmt: skip
    export = tmp_path / "auto.jsonl"
    header = {"format": "lessonloop-knowledge", "version": 1, "exported_at": "x"}
    line = {"kind": "preference", "scope": "project", "summary": "indent yaml with two spaces",
            "content": "automatic words", "why": "", "author": "auto", "seen": 5}  # fmt: skip
    export.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    assert cli("knowledge", "import", export, "--json").json()["reinforced"] == 1
    [kept] = cli("memory", "list", "--json").json()
    assert (kept["summary"], kept["content"], kept["why"], kept["author"]) == (
        "Indent YAML with two spaces",
        "my own words",
        "house style",
        "user",
    )
    assert kept["seen"] == 5


def test_secrets_never_reach_the_export_file(cli, home, tmp_path):
    admit(home, memory("Deploy with the release token", content="see the wiki"))
    # planted past admission, as an old store or a hand edit could hold it
    with closing(sqlite3.connect(home / "lessonloop.db")) as conn, conn:
        conn.execute(
            "UPDATE knowledge SET content = ?, why = ?, tags_json = ?",
            (f"token {GITHUB_TOKEN}", f"aws {AWS_KEY}", json.dumps([GITHUB_TOKEN])),
        )
        conn.execute("UPDATE knowledge_provenance SET detail = ?", (f"key={AWS_KEY}",))
    out = tmp_path / "out.jsonl"
    assert cli("knowledge", "export", "-o", out).code == 0
    text = out.read_text()
    assert "Deploy with the release token" in text
    assert GITHUB_TOKEN not in text and AWS_KEY not in text and "R8kq2Lm9" not in text
    assert "[REDACTED:" in text
    stdout = cli("knowledge", "export").out
    assert GITHUB_TOKEN not in stdout and AWS_KEY not in stdout and "Deploy with" in stdout


def test_an_imported_secret_is_redacted_on_the_way_in(cli, home, tmp_path):
    export = tmp_path / "leaky.jsonl"
    header = {"format": "lessonloop-knowledge", "version": 1}
    line = {"kind": "observation", "scope": "project", "summary": "The CI token lives in vault",
            "content": f"it is {GITHUB_TOKEN}"}  # fmt: skip
    export.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    assert cli("knowledge", "import", export).code == 0
    with closing(sqlite3.connect(home / "lessonloop.db")) as conn:
        dump = "\n".join(conn.iterdump())
    assert GITHUB_TOKEN not in dump and "The CI token lives in vault" in dump


def test_user_scope_reads_and_fills_the_users_store(cli, home, tmp_path, monkeypatch):
    cli("memory", "add", "--type", "preference", "--summary", "Answer in British English",
        "--scope", "user")  # fmt: skip
    cli("memory", "add", "--type", "decision", "--summary", "Use SQLite")
    out = tmp_path / "user.jsonl"
    cli("knowledge", "export", "--scope", "user", "-o", out)
    summaries = [json.loads(line).get("summary") for line in out.read_text().splitlines()[1:]]
    assert summaries == ["Answer in British English"]
    monkeypatch.setenv("LESSONLOOP_USER_HOME", str(tmp_path / "someone-else"))
    assert cli("knowledge", "import", out, "--json").json()["added"] == 1
    listed = cli("memory", "list", "--scope", "user", "--json").json()
    assert [m["summary"] for m in listed] == ["Answer in British English"]
    assert [m["summary"] for m in cli("memory", "list", "--scope", "project", "--json").json()] == [
        "Use SQLite"
    ]


def test_entries_out_of_use_are_exported_but_not_revived(cli, lived_in, tmp_path, monkeypatch):
    with closing(sqlite3.connect(lived_in / "lessonloop.db")) as conn, conn:
        conn.execute("UPDATE knowledge SET status = 'retired' WHERE kind = 'hint'")
    out = tmp_path / "all.jsonl"
    cli("knowledge", "export", "-o", out)
    assert '"status": "retired"' in out.read_text()
    other_home(tmp_path, monkeypatch)
    report = cli("knowledge", "import", out, "--json").json()
    assert (report["added"], report["skipped"]) == (3, 1)


GOOD_LINE = json.dumps({"kind": "decision", "scope": "project", "summary": "Use SQLite"})
HEADER = json.dumps({"format": "lessonloop-knowledge", "version": 1})


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "line 1 is not a lessonloop-knowledge header"),
        ("kind,scope\nbullet,x\n", "line 1 is not JSON"),
        (json.dumps({"format": "other", "version": 1}) + "\n", "line 1 is not a lessonloop"),
        (json.dumps({"format": "lessonloop-knowledge", "version": 2}) + "\n", "version 2 is not"),
        (f"{HEADER}\n{GOOD_LINE}\n{{not json\n", "line 3 is not JSON"),
        (f"{HEADER}\n{GOOD_LINE}\n\n[1, 2]\n", "line 4: an entry is a JSON object"),
        (f"{HEADER}\n{GOOD_LINE}\n" + GOOD_LINE.replace("decision", "bullet"), "line 3: a bullet"),
        (f"{HEADER}\n" + GOOD_LINE.replace('"Use SQLite"', '" "'), "line 2: summary is missing"),
        (f"{HEADER}\n" + GOOD_LINE[:-1] + ', "seen": -1}', "line 2: seen is not a count"),
        (f"{HEADER}\n" + GOOD_LINE[:-1] + ', "tags": "a,b"}', "line 2: tags is not a list"),
    ],
)
def test_a_bad_file_is_refused_whole_with_its_line_named(cli, home, tmp_path, text, words):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    answer = cli("knowledge", "import", bad, "--json")
    assert answer.code == 2
    message = answer.error()["error"]
    assert message.startswith("bad.jsonl: ") and words in message, message
    assert answer.out == ""
    assert not (home / "lessonloop.db").exists() or rows(home) == []  # nothing half-imported


def test_files_that_cannot_be_read_are_one_line(cli, tmp_path):
    missing = cli("knowledge", "import", tmp_path / "nope.jsonl")
    assert missing.code == 2 and missing.err.startswith("error: knowledge file not found")
    binary = tmp_path / "blob.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert "not utf-8 text" in cli("knowledge", "import", binary, "--json").error()["error"]
    assert cli("knowledge", "import", tmp_path, "--json").code == 2  # a directory


def test_export_errors_are_one_line(cli, lived_in, tmp_path):
    assert "scope is a scenario name" in cli("knowledge", "export", "--scope", "a/b", "--json")\
        .error()["error"]  # fmt: skip
    to_dir = cli("knowledge", "export", "-o", tmp_path, "--json")
    assert to_dir.code == 2 and "is a directory" in to_dir.error()["error"]


def test_texts_with_line_separators_survive_the_round_trip(cli, home, tmp_path, monkeypatch):
    summary = "Split paragraphs on U+2028\u2028and form feeds\x0c too"
    cli("memory", "add", "--type", "observation", "--summary", "Odd separators",
        "--content", summary)  # fmt: skip
    out = tmp_path / "odd.jsonl"
    cli("knowledge", "export", "-o", out)
    stored = cli("memory", "list", "--json").json()[0]["content"]
    other_home(tmp_path, monkeypatch)
    assert cli("knowledge", "import", out, "--json").json()["added"] == 1
    assert cli("memory", "list", "--json").json()[0]["content"] == stored


def test_as_a_process_a_bad_line_is_one_line_and_an_empty_store_exports_a_header(
    run_cli, home, tmp_path
):
    empty = run_cli("knowledge", "export", "--scope", "user")
    assert empty.code == 0 and len(empty.out.splitlines()) == 1
    assert json.loads(empty.out)["entries"] == 0
    header_only = tmp_path / "empty.jsonl"
    header_only.write_text(empty.out)
    nothing = run_cli("knowledge", "import", header_only, "--json")
    assert nothing.code == 0 and json.loads(nothing.out)["added"] == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f'{HEADER}\n{GOOD_LINE}\n{GOOD_LINE[:-1]}, "kind": "rumour"}}\n')
    answer = run_cli("knowledge", "import", bad)
    assert answer.code == 2 and answer.out == "" and "Traceback" not in answer.err
    assert answer.err == (
        "error: bad.jsonl: line 3: kind is one of bullet, hint, dead_end, pattern, decision, "
        "preference, observation, not 'rumour'\n"
    )


TOOLS = ("pnpm", "poetry", "cargo", "gradle", "maven", "bazel", "meson", "cmake", "ninja", "scons",
         "rake", "mix", "dune", "stack", "cabal", "opam", "conan", "vcpkg", "nix", "earthly")  # fmt: skip


@pytest.mark.parametrize("provenance", [[], [{"source": "user"}]])
def test_distinct_entries_with_the_same_provenance_are_each_added(cli, home, tmp_path, provenance):
    """The tester's file: 20 different summaries, all with the same (or no) provenance. Each
    is its own entry; only a second import of the same file finds them already there."""
    lines = [HEADER] + [
        json.dumps(
            {
                "kind": "decision",
                "scope": "project",
                "provenance": provenance,
                "summary": f"Build module {n} of the monorepo with {tool}",
            }
        )  # fmt: skip
        for n, tool in enumerate(TOOLS)
    ]
    shared = tmp_path / "shared.jsonl"
    shared.write_text("\n".join(lines) + "\n")
    first = cli("knowledge", "import", shared, "--json").json()
    assert (first["added"], first["reinforced"], first["unchanged"]) == (20, 0, 0)
    assert len(rows(home)) == 20
    second = cli("knowledge", "import", shared, "--json").json()
    assert (second["added"], second["reinforced"], second["unchanged"]) == (0, 0, 20)
    assert len(rows(home)) == 20
    assert cli("knowledge", "import", shared).out.startswith("imported shared.jsonl: 0 added")


def test_provenance_keeps_its_first_origin_and_lines_do_not_grow_over_hops(
    cli, lived_in, tmp_path, monkeypatch
):
    """export, import, export, import...: each import records the first origin once (an
    import's own provenance row is not wrapped again), so a line's size stays put."""
    sizes = []
    for hop in range(4):
        out = tmp_path / f"hop{hop}" / "team.jsonl"
        out.parent.mkdir()
        assert cli("knowledge", "export", "-o", out).code == 0
        lines = out.read_text().splitlines()[1:]
        sizes.append({json.loads(line)["summary"]: len(line.encode()) for line in lines})
        other_home(tmp_path, monkeypatch, name=f"home{hop}")
        assert cli("knowledge", "import", out, "--json").json()["added"] == 4
    assert len(sizes[1]) == 4 and sizes[1] == sizes[2] == sizes[3], sizes
    # one import row, carrying the run the bullet was first learned in
    [detail] = import_details(tmp_path / "home3", "Raise stealth")
    assert detail["file"] == "team.jsonl" and detail["provenance_count"] == 1
    assert [(o["source"], o["run_id"]) for o in detail["provenance"]] == [("coach", "r1")]


def test_export_refuses_a_scope_that_holds_nothing(cli, lived_in, tmp_path):
    out = tmp_path / "bogus.jsonl"
    answer = cli("knowledge", "export", "--scope", "bogus", "-o", out, "--json")
    assert answer.code == 1 and answer.out == "" and not out.exists()
    assert answer.error()["error"] == (
        "no knowledge in scope 'scenario:bogus': export one of all, project, user, "
        "scenario:grid_ctf"
    )
    text = cli("knowledge", "export", "--scope", "bogus")
    assert text.code == 1 and text.err.count("\n") == 1 and text.out == ""
    assert cli("knowledge", "export", "--scope", "grid_ctf").out.count("\n") == 3
    assert cli("knowledge", "export", "--scope", "user").code == 0  # named: a header alone


def test_export_refuses_a_missing_folder_instead_of_making_it(cli, lived_in, tmp_path):
    out = tmp_path / "no" / "such" / "x.jsonl"
    answer = cli("knowledge", "export", "-o", out)
    assert answer.code == 2 and answer.out == ""
    assert answer.err == f"error: --output is a file in an existing folder, and {out.parent} " \
        "does not exist\n"  # fmt: skip
    assert not (tmp_path / "no").exists()


def import_details(root, summary_start):
    """The details of the import provenance rows of the entry whose summary starts so."""
    with closing(sqlite3.connect(root / "lessonloop.db")) as conn:
        return [
            json.loads(detail)
            for (detail,) in conn.execute(
                "SELECT p.detail FROM knowledge_provenance p JOIN knowledge k ON k.id = "
                "p.knowledge_id WHERE p.source = 'import' AND k.summary LIKE ?",
                (f"{summary_start}%",),
            )
        ]


def test_an_entry_back_from_a_teammate_carries_its_origin_once(
    cli, lived_in, tmp_path, monkeypatch
):
    mine, theirs, back = (tmp_path / f"{name}.jsonl" for name in ("mine", "theirs", "back"))
    cli("knowledge", "export", "-o", mine)
    other_home(tmp_path, monkeypatch)
    cli("knowledge", "import", mine)
    cli("knowledge", "export", "-o", theirs)
    monkeypatch.setenv("LESSONLOOP_HOME", str(lived_in))
    assert cli("knowledge", "import", theirs, "--json").json()["reinforced"] == 4
    cli("knowledge", "export", "-o", back)  # the original rows and the import carrying them
    fresh = other_home(tmp_path, monkeypatch, name="newcomer")
    assert cli("knowledge", "import", back, "--json").json()["added"] == 4
    [detail] = import_details(fresh, "Raise stealth")
    assert [(o["source"], o["run_id"]) for o in detail["provenance"]] == [("coach", "r1")]
    assert detail["provenance_count"] == 1
