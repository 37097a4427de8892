"""The CLI's promises: JSON shapes, contract schemas, exit codes, one-line errors."""

from __future__ import annotations

import json
import re

import pytest

from lessonloop.cli.output import fmt
from lessonloop.errors import ERROR_LINE_MAX

from ..conftest import FIXTURES, PLUGIN, contract_validator, copy_home, home_made_once

Z_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
ERROR = contract_validator("cli-error-v1.schema.json")


DONE = ["run", "grid_ctf", "--iterations", 4, "--run-id", "done", "--json"]


@pytest.fixture(scope="module")
def made_done(tmp_path_factory):
    return home_made_once(tmp_path_factory, DONE)


@pytest.fixture
def finished(home, made_done):
    """A finished 4-generation run of grid_ctf, ``done`` (made once; each test has its copy)."""
    copy_home(made_done, home)


def test_run_json_shape(cli):
    ran = cli(*DONE)  # this test's own run, in this process: its summary is what is checked
    assert ran.code == 0, ran.err
    summary = ran.json()
    assert set(summary) == {
        "run_id",
        "scenario",
        "generations_executed",
        "best_score",
        "tournament_score",
        "current_elo",
        "status",
    }
    assert summary["run_id"] == "done" and summary["status"] == "completed"
    assert summary["generations_executed"] == 4 and 0 < summary["best_score"] <= 1
    assert 0 < summary["tournament_score"] <= 1


def test_status_and_show_validate_against_the_contracts(cli, finished):
    status = cli("status", "done", "--json").json()
    contract_validator("run-status-v1.schema.json").validate(status)
    assert [g["generation_index"] for g in status["generations"]] == [1, 2, 3, 4]
    for stamp in (status["run"]["created_at"], status["latest_generation"]["updated_at"]):
        assert Z_TIME.match(stamp)
    show = cli("show", "done", "--json").json()
    contract_validator("run-show-v1.schema.json").validate(show)
    assert show["generation"]["generation_index"] == 4
    assert isinstance(show["generation"]["strategy"], dict)
    best = cli("show", "done", "--best", "--json").json()
    contract_validator("run-show-v1.schema.json").validate(best)
    advanced = [g for g in status["generations"] if g["gate_decision"] == "advance"]
    # the best is the incumbent (the latest advance); best_score is its validated score,
    # its tournament mean stays available as tournament_score
    assert best["generation"]["generation_index"] == advanced[-1]["generation_index"]
    assert best["generation"]["mean_score"] == status["run"]["tournament_score"]
    assert (
        status["run"]["best_score"]
        == status["latest_generation"]["validated_score"]
        == best["run"]["best_score"]
        == status["progress_report"]["best_score"]
    )
    one = cli("show", "done", "--generation", 2, "--json").json()
    assert one["generation"]["generation_index"] == 2


def test_text_output_of_inspection_commands(cli, finished):
    assert "status completed" in cli("status", "done").out
    assert "strategy:" in cli("show", "done", "--best").out
    listed = cli("list").out.splitlines()
    assert listed[0].split() == [
        "RUN",
        "ID",
        "KIND",
        "SCENARIO",
        "STATUS",
        "GENERATIONS",
        "BEST",
        "CREATED",
    ], "a header names the columns"
    assert listed[1].split()[:6] == [
        "done",
        "scenario",
        "grid_ctf",
        "completed",
        "4/4",
        fmt(cli("status", "done", "--json").json()["run"]["best_score"]),
    ]
    assert listed[0].index("SCENARIO") == listed[1].index("grid_ctf"), "columns line up"
    watched = cli("watch", "done")
    assert watched.code == 0 and "run completed" in watched.out
    raw = [json.loads(line) for line in cli("watch", "done", "--ndjson").out.splitlines()]
    assert raw[-1]["event"] == "run_completed"


def test_list_scenarios_and_export(cli, finished):
    runs = cli("list", "--json").json()
    assert isinstance(runs, list) and runs[0]["run_id"] == "done"
    scenarios = cli("scenarios", "--json").json()
    names = [s["name"] for s in scenarios]
    assert {"grid_ctf", "negotiation"} <= set(names)
    assert all(set(s) == {"name", "description", "strategy_schema"} for s in scenarios)
    exported = cli("export", "done").json()
    assert len(exported["generations"]) == 4
    assert exported["generations"][0]["matches"] and exported["generations"][0]["role_outputs"]


def test_list_on_a_fresh_home_is_empty(cli):
    assert cli("list", "--json").json() == []


def test_evaluate_is_deterministic_per_seeds_and_varies_across_seeds(cli, tmp_path):
    schema = {s["name"]: s for s in cli("scenarios", "--json").json()}["grid_ctf"][
        "strategy_schema"
    ]
    assert all(v["type"] in ("number", "integer") for v in schema["properties"].values())
    strategy = json.dumps(
        {
            k: (v["minimum"] + v["maximum"]) / 2
            if v["type"] == "number"
            else (v["minimum"] + v["maximum"]) // 2
            for k, v in schema["properties"].items()
        }
    )
    first = cli("evaluate", "grid_ctf", "--strategy", strategy, "--seeds", "1..8", "--json")
    again = cli("evaluate", "grid_ctf", "--strategy", strategy, "--seeds", "1..8", "--json")
    assert first.code == 0, first.err
    result = first.json()
    assert set(result) >= {
        "strategy",
        "seeds",
        "scores",
        "mean_score",
        "dimensions",
        "valid",
        "problems",
    }
    assert result == again.json()
    assert result["seeds"] == list(range(1, 9)) and len(set(result["scores"])) > 1
    lines = tmp_path / "many.jsonl"
    lines.write_text(strategy + "\n" + strategy + "\n")
    many = cli("evaluate", "grid_ctf", "--strategies", lines, "--seeds", "3,4", "--json").json()
    assert isinstance(many, list) and len(many) == 2 and many[0]["seeds"] == [3, 4]


def test_a_plugin_scenario_in_minimal_form_runs(cli):
    result = cli("run", PLUGIN, "--iterations", 5, "--json")
    assert result.code == 0, result.err
    assert result.json()["scenario"] == "archery"
    assert result.json()["generations_executed"] == 5


BAD_INPUTS = [
    (("run", "nope", "--iterations", 3), 2, "valid scenarios: grid_ctf, negotiation"),
    (("run", "grid_ctf", "--iterations", 0), 2, "--iterations must be between 1"),
    (
        ("run", "grid_ctf", "--iterations", "99999999999999999999"),
        2,
        "--iterations must be between",
    ),
    (("run", "grid_ctf", "--match-timeout", "inf"), 2, "--match-timeout"),
    (("run", "grid_ctf", "--min-delta", "nan"), 2, "--min-delta"),
    (("run", "grid_ctf", "--matches", 0), 2, "--matches"),
    (("run", "grid_ctf", "--run-id", "x" * 300), 2, "invalid run id"),
    (("run", "grid_ctf", "--run-id", "-oops"), 2, "invalid run id"),
    (("run", "grid_ctf", "--provider", "bogus"), 2, "unknown provider"),
    (("evaluate", "grid_ctf", "--strategy", "{bad json"), 2, "not valid JSON"),
    (("evaluate", "grid_ctf", "--strategy", "[1, 2]"), 2, "JSON object"),
    (("evaluate", "grid_ctf", "--strategy", '{"aggression": NaN}'), 2, "NaN is not a JSON number"),
    (("evaluate", "grid_ctf", "--strategy", '{"aggression": 7}'), 2, "failed validation"),
    (("evaluate", "grid_ctf", "--strategy", "{}", "--seeds", "9..1"), 2, "--seeds"),
    (("evaluate", "grid_ctf", "--strategy", "{}", "--seeds", "1..99999999999"), 2, "at most"),
    (("evaluate", "grid_ctf", "--strategy", "{}", "--match-timeout", 0), 2, "--match-timeout"),
    (("evaluate", "grid_ctf"), 2, "exactly one of"),
    (("status", "no-such-run"), 1, "unknown run id"),
    (("show", "no-such-run"), 1, "unknown run id"),
    (("resume", "no-such-run"), 1, "unknown run id"),
    (("watch", "no-such-run"), 1, "unknown run id"),
    (("export", "no-such-run"), 1, "unknown run id"),
    (
        ("run", f"{FIXTURES / 'misbehaving_scenario.py'}:Incomplete"),
        1,
        "lacks: strategy_schema, play",
    ),
    (("run", "/no/such/file.py:Thing"), 2, "not found"),
    (("run", "grid_ctf", "--bogus-flag"), 2, "bogus"),
    (("export", "x", "--format", "xml"), 2, "unknown export format"),
]


@pytest.mark.parametrize(
    "args,code,message", BAD_INPUTS, ids=[" ".join(map(str, a[0])) for a in BAD_INPUTS]
)
def test_bad_input_gets_one_clear_json_error_and_exit_code(cli, args, code, message):
    result = cli(*args, "--json")
    assert result.code == code, result.err
    error = result.error()
    ERROR.validate(error)
    assert message in error["error"]
    plain = cli(*args)
    assert (
        plain.code == code and plain.err.startswith("error: ") and len(plain.err.splitlines()) == 1
    )


def test_an_error_echoing_a_huge_argument_is_cut_in_the_middle(cli):
    result = cli("status", "r" * 100_000, "--json")
    assert result.code == 1
    error = result.error()["error"]
    assert len(error) <= ERROR_LINE_MAX and error.startswith("unknown run id 'rrr")
    hint = cli("status", "r", "--json").error()["error"].rsplit("'", 1)[1]  # what follows the id
    assert "[truncated]" in error and hint.strip() and error.endswith("r'" + hint)


def test_corrupt_database_is_one_line_for_every_command(cli, home):
    home.mkdir(parents=True)
    (home / "lessonloop.db").write_bytes(b"\0garbage" * 512)
    for args in (("run", "grid_ctf", "--iterations", 1), ("status", "x"), ("list",), ("show", "x")):
        result = cli(*args, "--json")
        assert result.code == 1
        assert "corrupt" in result.error()["error"]
    assert (home / "lessonloop.db").read_bytes() == b"\0garbage" * 512, "nothing is lost"


def test_unwritable_home_for_run(cli, home, monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("LESSONLOOP_HOME", str(blocker / "home"))
    result = cli("run", "grid_ctf", "--iterations", 1, "--json")
    assert result.code == 1
    assert "cannot write to the lessonloop home" in result.error()["error"]


def test_no_traceback_reaches_the_user_from_a_real_process(run_cli, home):
    home.mkdir(parents=True)
    (home / "lessonloop.db").write_text("corrupt")
    for args, code in (
        (("status", "x", "--json"), 1),
        (("run", "nope"), 2),
        (("evaluate", "grid_ctf", "--strategy", "{"), 2),
    ):
        result = run_cli(*args)
        assert result.code == code
        assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1


def test_home_that_is_a_file_is_named_for_every_command(cli, monkeypatch, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("LESSONLOOP_HOME", str(blocker))
    for args in (("run", "grid_ctf", "--iterations", 1), ("status", "x"), ("list",)):
        result = cli(*args, "--json")
        assert result.code == 1 and "not a directory" in result.error()["error"]


def test_rerunning_a_run_id_resumes_it_and_refuses_conflicting_settings(cli, finished):
    other = cli("run", "negotiation", "--run-id", "done", "--json")
    assert other.code == 2 and "is a 'grid_ctf' run" in other.error()["error"]
    seed = cli("run", "grid_ctf", "--run-id", "done", "--seed", 99, "--json")
    assert seed.code == 2 and "keeps the settings" in seed.error()["error"]
    lower = cli("run", "grid_ctf", "--run-id", "done", "--iterations", 2, "--json")
    assert lower.code == 2 and "cannot be lower" in lower.error()["error"]
    assert cli("status", "done", "--json").json()["run"]["target_generations"] == 4
    again = cli("run", "grid_ctf", "--run-id", "done", "--json")
    assert again.code == 0 and again.json()["generations_executed"] == 4
    extended = cli("run", "grid_ctf", "--run-id", "done", "--iterations", 6, "--json")
    assert extended.code == 0 and extended.json()["generations_executed"] == 6
    watched = [json.loads(line) for line in cli("watch", "done", "--ndjson").out.splitlines()]
    completed = [
        e["payload"]["generation"] for e in watched if e["event"] == "generation_completed"
    ]
    assert completed == [1, 2, 3, 4, 5, 6], "watch follows a resumed run to its real end"


def test_export_to_a_file_never_writes_through_special_files(cli, finished, tmp_path):
    target = tmp_path / "out.json"
    assert cli("export", "done", "-o", target).code == 0
    assert json.loads(target.read_text())["run"]["run_id"] == "done"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    refused = cli("export", "done", "-o", link, "--json")
    assert refused.code == 2 and "not a regular file" in refused.error()["error"]
    missing_dir = cli("export", "done", "-o", tmp_path / "nope" / "x.json", "--json")
    assert missing_dir.code == 2 and not (tmp_path / "nope").exists()


def test_a_scenario_whose_matches_all_fail_fails_the_run_and_evaluate(cli):
    crasher = f"{FIXTURES / 'misbehaving_scenario.py'}:AlwaysFails"
    run = cli("run", crasher, "--iterations", 2, "--json")
    assert run.code == 1 and "every match in generation 1 failed" in run.error()["error"]
    evaluated = cli("evaluate", crasher, "--strategy", '{"x": 0.5}', "--seeds", "1..3")
    assert evaluated.code == 1 and "failed: seed 1: RuntimeError" in evaluated.out
    assert "3 matches failed" in evaluated.err


def test_a_scenario_the_offline_agent_cannot_search_is_refused_before_a_run_exists(cli):
    wordy = f"{FIXTURES / 'misbehaving_scenario.py'}:Wordy"
    result = cli("run", wordy, "--iterations", 2, "--json")
    assert result.code == 1 and "has type 'string'" in result.error()["error"]
    assert cli("list", "--json").json() == []


def test_help_lists_every_command(run_cli):
    result = run_cli("--help")
    assert result.code == 0
    for command in (
        "run",
        "resume",
        "status",
        "show",
        "list",
        "watch",
        "export",
        "scenarios",
        "evaluate",
        "doctor",
        "usage",
        "improve",
        "judge",
        "solve",
    ):
        assert re.search(rf"^\s+{command}\s", result.out, re.M), command


def test_help_gives_each_command_its_whole_first_sentence(run_cli, home):
    """Not cut to the terminal's width with "...": every description ends its sentence."""
    from ..conftest import subprocess_env

    for args in (("--help",), ("memory", "--help")):
        result = run_cli(*args, env=subprocess_env(home, COLUMNS="80"))
        assert result.code == 0, result.err
        listed = result.out.split("Commands:\n", 1)[1]
        assert "..." not in listed, listed
        entries = re.split(r"\n  (?=\S)", "\n" + listed.rstrip())[1:]
        assert len(entries) >= 9
        for entry in entries:
            name, description = entry.split(None, 1)
            assert " ".join(description.split()).endswith("."), (name, description)
            assert all(len(line) <= 80 for line in entry.splitlines()), "wrapped, not cut"


def test_help_is_printed_from_its_cache_without_typer_and_refreshed_when_commands_change(
    home, tmp_path
):
    import os
    import subprocess
    import sys
    import time

    from lessonloop import help_cache

    from ..conftest import subprocess_env

    env = subprocess_env(home)
    probe = (
        "import sys\nsys.argv = ['lessonloop', '--help']\nfrom lessonloop.__main__ import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(str('typer' in sys.modules))"
    )
    first = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    second = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert first.stderr == "True" and second.stderr == "False", "the second --help is cached"
    assert first.stdout == second.stdout and "memory" in second.stdout
    cached = list((tmp_path / "cache" / "lessonloop").iterdir())
    assert len(cached) == 1
    app = os.path.join(help_cache.CLI_DIR, "app.py")
    stat = os.stat(app)
    try:  # a changed command set is another cache key: never a stale list
        os.utime(app, ns=(stat.st_atime_ns, time.time_ns()))
        third = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env=env
        )
        assert third.stderr == "True"
    finally:
        os.utime(app, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_help_imports_no_provider_sdk(home):
    """The SDKs cost most of a second to import: only a route that uses one may pay it."""
    import subprocess
    import sys

    from ..conftest import subprocess_env

    probe = (
        "import sys\nfrom lessonloop.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\nprint(sorted(m for m in ('anthropic', 'openai', "
        "'httpx', 'httpx2', 'jsonschema', 'pydantic', 'yaml') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=subprocess_env(home),
        timeout=60,
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.reliability
def test_read_only_database_inspects_but_run_refuses(tmp_path):
    """Run as an unprivileged user so that file permissions apply even when tests run as root."""
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    from ..conftest import ROOT

    prefix = (
        []
        if os.geteuid() != 0
        else (
            [shutil.which("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups"]
            if shutil.which("setpriv")
            else None
        )
    )
    if prefix is None:
        pytest.skip("needs setpriv to drop root privileges")
    base = tempfile.mkdtemp(prefix="lessonloop-ro-cli-")
    home = os.path.join(base, "home")
    env = dict(os.environ, LESSONLOOP_HOME=home, PYTHONPATH=str(ROOT / "src"))

    def lessonloop(*args, as_user=True):
        command = (prefix if as_user else []) + [
            sys.executable,
            "-m",
            "lessonloop",
            *map(str, args),
        ]
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd="/")

    try:
        os.chmod(base, 0o755)
        made = lessonloop(
            "run", "negotiation", "--iterations", 2, "--run-id", "ro", "--json", as_user=False
        )
        assert made.returncode == 0, made.stderr
        os.chmod(os.path.join(home, "lessonloop.db"), 0o444)
        os.chmod(home, 0o555)
        status = lessonloop("status", "ro", "--json")
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["progress_report"]["generations_completed"] == 2
        assert lessonloop("show", "ro", "--best", "--json").returncode == 0
        assert json.loads(lessonloop("list", "--json").stdout)[0]["run_id"] == "ro"
        refused = lessonloop("run", "negotiation", "--iterations", 1, "--json")
        assert refused.returncode == 1
        assert "Traceback" not in refused.stderr
        assert "cannot write" in json.loads(refused.stderr)["error"]
    finally:
        os.chmod(home, 0o755)
        shutil.rmtree(base)


# --- carry-over flags and the context manifest ------------------------------------------------

STATE_BLOCK = re.compile(r"```json lessonloop-state\n(.*?)\n```", re.S)
KNOWLEDGE_VIEWS = ("playbook.md", "hints.md", "dead_ends.md")
KNOWLEDGE_PARTS = {"playbook", "hints", "dead_ends"}


def _manifest_file(home, run_id: str, generation: int) -> dict:
    path = home / "runs" / run_id / "generations" / str(generation) / "context.json"
    return json.loads(path.read_text())


def _component_names(manifest: dict) -> list[str]:
    return [c["name"] for c in manifest["components"]]


def _view_ids(home, scenario: str, view: str) -> list[int]:
    text = (home / "knowledge" / scenario / view).read_text()
    return [int(i) for i in re.findall(r"^- \[(\d+)\]", text, re.M)]


def _sha256(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def _incumbent_text(strategy: dict, score: float) -> str:
    """The incumbent as the context shows it: its strategy in words, fields sorted."""
    words = ", ".join(f"{k} {json.dumps(v)}" for k, v in sorted(strategy.items()))
    return f"{words} (score {score:.4f})"


def _final_incumbent(cli, run_id: str) -> dict:
    """The strategy and score of the run's last advanced generation (what a new run starts from)."""
    gens = cli("status", run_id, "--json").json()["generations"]
    last = [g for g in gens if g["gate_decision"] == "advance"][-1]["generation_index"]
    shown = cli("show", run_id, "--generation", last, "--json").json()["generation"]
    return {"strategy": shown["strategy"], "score": shown["mean_score"]}


def _first_competitor_state(cli, run_id: str) -> tuple[str, dict]:
    """The prompt of generation 1's first competitor call and its machine-readable block."""
    exported = cli("export", run_id).json()
    first = [
        o
        for o in exported["generations"][0]["role_outputs"]
        if o["role"] == "competitor" and o["attempt"] == 0
    ][0]
    return first["prompt"], json.loads(STATE_BLOCK.findall(first["prompt"])[-1])


def _completed_events(home, run_id: str) -> dict[int, dict]:
    lines = (home / "runs" / run_id / "events.ndjson").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return {
        e["payload"]["generation"]: e["payload"]
        for e in events
        if e["event"] == "generation_completed"
    }


CARRY_OVER = [
    ((), True, True),
    (("--no-incumbent",), False, True),
    (("--no-knowledge",), True, False),
    (("--fresh",), False, False),
]


@pytest.fixture(scope="module")
def made_first(tmp_path_factory):
    """A home with one finished 4-generation run, ``first`` (made once for the four flags)."""
    return home_made_once(
        tmp_path_factory, ["run", "grid_ctf", "--iterations", 4, "--run-id", "first", "--json"]
    )


@pytest.mark.parametrize(
    "flags,carries_incumbent,reads_knowledge",
    CARRY_OVER,
    ids=["default", "no-incumbent", "no-knowledge", "fresh"],
)
def test_carry_over_flags_decide_the_start_strategy_and_the_context(
    cli, home, made_first, flags, carries_incumbent, reads_knowledge
):
    copy_home(made_first, home)  # the first run, whose incumbent and knowledge carry over
    knowledge = {view: _view_ids(home, "grid_ctf", view) for view in KNOWLEDGE_VIEWS}
    assert knowledge["playbook.md"], "the first run must leave a playbook to carry over"
    views_before = {v: (home / "knowledge" / "grid_ctf" / v).read_text() for v in KNOWLEDGE_VIEWS}
    incumbent = _final_incumbent(cli, "first")

    second = cli("run", "grid_ctf", "--iterations", 2, "--run-id", "second", *flags, "--json")
    assert second.code == 0, second.err
    manifests = {g: _manifest_file(home, "second", g) for g in (1, 2)}
    opening = manifests[1]
    names = _component_names(opening)
    prompt, state = _first_competitor_state(cli, "second")
    gen1 = _completed_events(home, "second")[1]

    # the start strategy: the first run's final incumbent, or none at all
    if carries_incumbent:
        component = {c["name"]: c for c in opening["components"]}["incumbent"]
        assert component["sha256"] == _sha256(
            _incumbent_text(incumbent["strategy"], incumbent["score"])
        )
        assert state["incumbent"] == incumbent
        assert gen1["incumbent_score"] is not None, "generation 1 is compared to the incumbent"
        assert "no incumbent yet" not in gen1["rationale"]
    else:
        assert "incumbent" not in names
        assert state["incumbent"] is None
        assert gen1["incumbent_score"] is None and gen1["mean_delta"] is None
        assert "no incumbent yet" in gen1["rationale"]

    # the knowledge: the playbook, hints and dead ends the first run left, or none at all
    if reads_knowledge:
        assert opening["budget"]["trimmed"] == []
        assert sorted(opening["knowledge"]["playbook"]) == sorted(knowledge["playbook.md"])
        assert sorted(opening["knowledge"]["hints"]) == sorted(knowledge["hints.md"])
        assert sorted(opening["knowledge"]["dead_ends"]) == sorted(knowledge["dead_ends.md"])
        assert "playbook" in names
        assert sorted(b["id"] for b in state["playbook"]) == sorted(knowledge["playbook.md"])
        assert sorted(h["id"] for h in state["hints"]) == sorted(knowledge["hints.md"])
    else:
        for g, manifest in manifests.items():
            assert manifest["knowledge"] == {"playbook": [], "hints": [], "dead_ends": []}, g
            assert not KNOWLEDGE_PARTS & set(_component_names(manifest)), g
        assert state["playbook"] == [] and state["hints"] == [] and state["dead_ends"] == []
        assert 'untrusted-reference name="playbook"' not in prompt
        views_after = {
            v: (home / "knowledge" / "grid_ctf" / v).read_text() for v in KNOWLEDGE_VIEWS
        }
        assert views_after == views_before, "a run that reads no knowledge writes none"


def test_show_json_holds_each_generations_context_manifest(cli, home, finished):
    scenario = {s["name"]: s for s in cli("scenarios", "--json").json()}["grid_ctf"]
    interface = {
        k: v
        for k, v in scenario["strategy_schema"].items()
        if k not in ("$schema", "$id", "$comment")
    }
    status = cli("status", "done", "--json").json()
    incumbent = None  # the most recent advanced strategy before each generation
    for listed in status["generations"]:
        index = listed["generation_index"]
        shown = cli("show", "done", "--generation", index, "--json").json()["generation"]
        manifest = shown["context"]
        assert manifest == _manifest_file(home, "done", index), index
        assert manifest["generation"] == index
        assert set(manifest) >= {"components", "knowledge", "budget"}
        assert set(manifest["knowledge"]) == {"playbook", "hints", "dead_ends"}
        for component in manifest["components"]:
            assert set(component) >= {"name", "sha256"}
            assert re.fullmatch(r"[0-9a-f]{64}", component["sha256"])
        hashes = {c["name"]: c["sha256"] for c in manifest["components"]}
        assert len(hashes) == len(manifest["components"]), "each component once"
        # the hashes are of what the competitor was shown
        assert hashes["rules"] == _sha256(scenario["description"])
        assert hashes["strategy_interface"] == _sha256(
            "A strategy is one JSON object with these fields:\n"
            + "\n".join(
                f"- {name}: {spec['type']} from {spec['minimum']:g} to {spec['maximum']:g}. "
                f"{spec['description']}"
                for name, spec in sorted(interface["properties"].items())
            )
        )
        if incumbent is None:
            assert "incumbent" not in hashes
        else:
            assert hashes["incumbent"] == _sha256(_incumbent_text(*incumbent))
        if shown["gate_decision"] == "advance":
            incumbent = (shown["strategy"], shown["mean_score"])
    assert incumbent is not None
    best = cli("show", "done", "--best", "--json").json()["generation"]
    assert best["context"] == _manifest_file(home, "done", best["generation_index"])
    exported = cli("export", "done").json()
    assert [g["context"] for g in exported["generations"]] == [
        _manifest_file(home, "done", g) for g in (1, 2, 3, 4)
    ]


def test_watch_waits_for_a_run_that_holds_its_lock_before_its_row_is_stored(cli, home):
    """`watch` started the moment a run starts (its lock taken, its row not yet stored) follows
    it instead of calling it unknown; an id nothing holds stays unknown at once."""
    import threading
    import time

    from lessonloop import paths
    from lessonloop.loop.creation import create_or_reuse
    from lessonloop.loop.lifecycle import run_lock
    from lessonloop.store import open_store

    assert cli("watch", "starting").code == 1  # nothing holds it: unknown at once
    with open_store():
        pass  # the database exists, as it does when a run starts

    locked = threading.Event()

    def a_run_starting():
        with run_lock(paths.run_dir("starting")):
            locked.set()
            time.sleep(0.3)
            with open_store() as store:
                create_or_reuse(store, "grid_ctf", 2, run_id="starting")
            time.sleep(0.2)

    starting = threading.Thread(target=a_run_starting)
    starting.start()
    locked.wait(10)
    watched = cli("watch", "starting", "--interval", "0.05")
    starting.join()
    assert watched.code == 0, watched.err
    assert "is not running" in watched.out  # found, then its lock was released unfinished
