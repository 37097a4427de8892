"""improve, judge and solve through the CLI, driven by scripted responses."""

from __future__ import annotations

import json
import shutil

import pytest

from ..conftest import ROOT, subprocess_env

EXAMPLES = ROOT / "examples" / "tasks"
GOOD_SQL = (
    "SELECT c.name, ROUND(SUM(o.amount_cents) / 100.0, 2) AS total_eur FROM customers c "
    "JOIN orders o ON o.customer_id = c.id WHERE o.status = 'paid' AND o.ordered_at "
    "BETWEEN '2024-01-01' AND '2024-12-31' GROUP BY c.id ORDER BY total_eur DESC LIMIT 3;"
)
BAD_SQL = (
    "SELECT c.name, SUM(o.amount_cents) / 100.0 AS total_eur FROM customers c JOIN orders o "
    "ON o.customer_id = c.id GROUP BY c.id ORDER BY total_eur DESC LIMIT 3;"
)


def script(tmp_path, name="script.json", **roles) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"on_exhausted": "repeat_last", **roles}))
    return f"scripted:{path}"


def fenced(sql: str) -> str:
    return f"Here is the query:\n```sql\n{sql}\n```"


def test_improve_sql_task_fails_then_passes_and_records_why_it_stopped(cli, tmp_path, home):
    provider = script(tmp_path, competitor=[fenced(BAD_SQL), fenced(GOOD_SQL), fenced(GOOD_SQL)])
    result = cli(
        "improve",
        EXAMPLES / "sql-top-customers.yaml",
        "--provider",
        provider,
        "--run-id",
        "sql1",
        "--json",
    )
    assert result.code == 0, result.err
    summary = result.json()
    assert summary["status"] == "completed"
    assert "threshold 1 reached in round 2 and confirmed in round 3" in summary["stop_reason"]
    status = cli("status", "sql1", "--json").json()
    scores = [g["mean_score"] for g in status["generations"]]
    assert scores == [0.0, 1.0, 1.0]
    shown = cli("show", "sql1", "--generation", 3, "--json").json()
    assert "threshold" in shown["run"]["stop_reason"]
    first = cli("show", "sql1", "--generation", 1, "--json").json()
    assert first["generation"]["dimensions"]["verifier"] == 0.0
    assert (home / "runs" / "sql1" / "best_output.sql").read_text().startswith("SELECT c.name")
    analysis = (home / "runs" / "sql1" / "generations" / "1" / "analysis.md").read_text()
    assert "Verifier FAILED" in analysis and "expected rows" in analysis
    assert cli("list", "--json").json()[0]["run_id"] == "sql1"
    exported = cli("export", "sql1", "--format", "json")
    assert exported.code == 0


def test_the_next_improve_starts_with_what_the_last_one_learned(cli, tmp_path, home):
    provider = script(tmp_path, competitor=[fenced(BAD_SQL), fenced(GOOD_SQL), fenced(GOOD_SQL)])
    assert cli("improve", EXAMPLES / "sql-top-customers.yaml", "--provider", provider).code == 0
    again = script(tmp_path, "again.json", competitor=[fenced(GOOD_SQL)])
    result = cli(
        "improve",
        EXAMPLES / "sql-top-customers.yaml",
        "--provider",
        again,
        "--run-id",
        "sql2",
        "--json",
    )
    assert result.code == 0
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    with open_store(readonly=True) as store:
        prompt = store.query_one(
            "SELECT prompt FROM role_outputs WHERE run_id = 'sql2' ORDER BY id LIMIT 1"
        )["prompt"]
    assert "Lessons from earlier runs" in prompt and "GROUP BY c.id" in prompt
    assert "Outputs that failed before" in prompt and "failed the verifier" in prompt
    playbook = (home / "knowledge" / "task-sql-top-customers" / "playbook.md").read_text()
    assert "Best output so far scored 1.00" in playbook
    assert run_store.get_run  # the store module is importable read-only


def test_judge_of_a_verifier_only_task_works_offline(cli, tmp_path, home):
    good, bad = tmp_path / "good.sql", tmp_path / "bad.sql"
    good.write_text(GOOD_SQL)
    bad.write_text(BAD_SQL)
    verdict = cli("judge", EXAMPLES / "sql-top-customers.yaml", "--output", good, "--json").json()
    assert verdict["score"] == 1.0 and verdict["passed_verifier"] is True
    assert set(verdict) == {"score", "passed_verifier", "dimensions", "reasoning", "epoch"}
    failed = cli("judge", EXAMPLES / "sql-top-customers.yaml", "--output", bad, "--json").json()
    assert failed["score"] == 0.0 and failed["passed_verifier"] is False
    assert not home.exists(), "judging without a judge model writes nothing"


def test_judge_takes_the_answer_out_of_a_reply_as_improve_does(cli, tmp_path):
    reply = tmp_path / "reply.md"
    reply.write_text(f"Here is the query:\n\n```sql\n{GOOD_SQL}\n```\n\nIt groups by id.")
    assert (
        cli("judge", EXAMPLES / "sql-top-customers.yaml", "--output", reply, "--json").json()[
            "score"
        ]
        == 1.0
    )
    reply.write_text(
        'Done:\n```json\n{"service": "billing-api", "replicas": 3, "port": 8443, '
        '"tls": true, "healthcheck": {"path": "/healthz", "interval_seconds": 10}, '
        '"env": {"LOG_LEVEL": "info", "REGION": "eu-west-1"}}\n```'
    )
    assert (
        cli("judge", EXAMPLES / "service-config.yaml", "--output", reply, "--json").json()["score"]
        == 1.0
    )


def test_judge_of_a_schema_checked_config(cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "service": "billing-api",
                "replicas": 3,
                "port": 8443,
                "tls": True,
                "healthcheck": {"path": "/healthz", "interval_seconds": 10},
                "env": {"LOG_LEVEL": "info", "REGION": "eu-west-1"},
            }
        )
    )
    assert (
        cli("judge", EXAMPLES / "service-config.yaml", "--output", config, "--json").json()["score"]
        == 1.0
    )
    config.write_text(json.dumps({"service": "billing-api", "replicas": 1}))
    verdict = cli("judge", EXAMPLES / "service-config.yaml", "--output", config, "--json").json()
    assert verdict["score"] == 0.0 and "required property" in verdict["reasoning"]


def test_a_rubric_task_with_a_scripted_judge_scores_rises_and_stops(cli, tmp_path):
    drafts = [
        "Sorry. Refund soon.",
        "Sorry about order A-10423: a full refund in 3-5 business days.",
        "I'm sorry you were charged twice for order A-10423. We refund the "
        "duplicate in full within 3-5 business days to your card.",
    ]
    verdicts = [
        '{"dimensions": {"empathy": 0.6, "accuracy": 0.5, "actionability": 0.5, "concision": 0.9}}',
        '<<<VERDICT\n{"dimensions": {"empathy": 0.9, "accuracy": 0.9, "actionability": 0.8,'
        ' "concision": 0.9}, "reasoning": "good"}\nVERDICT>>>',
    ]
    provider = script(
        tmp_path,
        competitor=drafts,
        judge=[verdicts[0]] * 2 + [verdicts[1]] * 4,
        coach=[
            '{"edits": [{"op": "add_bullet", "text": "Quote the order number '
            'and the 3-5 business day window", "tags": ["policy"]}]}'
        ],
        curator=['{"decisions": [{"index": 0, "decision": "accept"}]}'],
    )
    result = cli(
        "improve",
        EXAMPLES / "support-reply.yaml",
        "--provider",
        provider,
        "--run-id",
        "reply",
        "--json",
    )
    assert result.code == 0, result.err
    status = cli("status", "reply", "--json").json()
    scores = [g["mean_score"] for g in status["generations"]]
    assert scores[0] == 0.0, "the first draft lacks the order number: 0 before any judge call"
    assert scores[-1] > scores[1] > 0
    assert "confirmed" in result.json()["stop_reason"]
    usage = cli("usage", "--run", "reply", "--json").json()
    assert usage["by_role"]["judge"]["calls"] == 4, "2 samples for each of 2 distinct outputs"
    from lessonloop.store import open_store

    with open_store(readonly=True) as store:
        bullets = [
            r["summary"]
            for r in store.query(
                "SELECT summary FROM knowledge WHERE scope = 'task:support-refund-reply'"
            )
        ]
    assert "Quote the order number and the 3-5 business day window" in bullets


@pytest.mark.parametrize(
    "command",
    [["improve", EXAMPLES / "sql-top-customers.yaml"], ["solve", "write a haiku about SQLite"]],
)
def test_without_a_model_improve_and_solve_say_so_in_one_line(cli, command):
    result = cli(*command, "--json")
    assert result.code == 2
    assert "needs a model" in result.error()["error"]


def test_judging_a_rubric_task_without_a_model_says_so(cli, tmp_path, home):
    reply = tmp_path / "reply.md"
    reply.write_text("A-10423 refunded")
    result = cli("judge", EXAMPLES / "support-reply.yaml", "--output", reply, "--json")
    assert result.code == 2 and "needs a model" in result.error()["error"]
    assert not home.exists(), "a refusal writes nothing"


def test_solve_designs_saves_shows_and_improves_a_task(cli, tmp_path, home):
    design = {
        "name": "greeting",
        "prompt": "Write a greeting that contains the word hello.",
        "output_format": "text",
        "required_strings": ["hello"],
        "verifier": {"command": "grep -q hello {file}", "timeout": 5},
        "threshold": 1.0,
        "max_rounds": 3,
    }
    provider = script(
        tmp_path,
        designer=["Here is the task:\n" + json.dumps(design)],
        competitor=["hi there", "hello world", "hello world!"],
    )
    result = cli("solve", "a friendly greeting", "--provider", provider)
    assert result.code == 0, result.err
    saved = home / "tasks" / "greeting.yaml"
    assert saved.exists() and "grep -q hello" in saved.read_text()
    assert "designed task saved to" in result.out and "round 3" in result.out


def test_solve_gets_one_repair_round_for_an_invalid_design(cli, tmp_path):
    provider = script(tmp_path, designer=['{"name": "x"}', '{"name": "x"}'])
    result = cli("solve", "anything", "--provider", provider, "--json")
    assert result.code == 1 and "field 'prompt'" in result.error()["error"]


def test_a_task_file_copied_elsewhere_still_finds_its_verifier_files(cli, tmp_path):
    copy = tmp_path / "tasks"
    shutil.copytree(EXAMPLES, copy)
    good = tmp_path / "good.sql"
    good.write_text(GOOD_SQL)
    verdict = cli("judge", copy / "sql-top-customers.yaml", "--output", good, "--json").json()
    assert verdict["passed_verifier"] is True


def test_an_interrupted_task_run_resumes_after_its_stored_rounds(cli, tmp_path, monkeypatch):
    from lessonloop.tasks import improve

    provider = script(tmp_path, competitor=[fenced(BAD_SQL), fenced(GOOD_SQL), fenced(GOOD_SQL)])
    real_round = improve.TaskRun._round

    def stop_after_one(self, index):
        if index == 2:
            raise KeyboardInterrupt
        real_round(self, index)

    monkeypatch.setattr(improve.TaskRun, "_round", stop_after_one)
    interrupted = cli(
        "improve", EXAMPLES / "sql-top-customers.yaml", "--provider", provider, "--run-id", "cut"
    )
    assert interrupted.code == 1
    assert (
        interrupted.err == "stopped: run cut interrupted; continue with `lessonloop resume cut`\n"
    )
    assert cli("status", "cut", "--json").json()["run"]["status"] == "stopped"
    monkeypatch.setattr(improve.TaskRun, "_round", real_round)
    script(tmp_path, competitor=[fenced(GOOD_SQL)])  # scripted replies restart in a new process
    resumed = cli("resume", "cut", "--json")
    assert resumed.code == 0, resumed.err
    scores = [g["mean_score"] for g in cli("status", "cut", "--json").json()["generations"]]
    assert scores == [0.0, 1.0, 1.0]


def test_a_verifier_hunting_for_keys_finds_none(cli, tmp_path, home, monkeypatch):
    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-api03-" + "k" * 40,
        "LESSONLOOP_API_KEY": "plainsecret123",
        "GITHUB_TOKEN": "ghp_" + "a" * 36,
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    task = tmp_path / "snoop.yaml"
    task.write_text(
        "name: snoop\nprompt: say anything\nverifier:\n"
        '  command: "env; cat /proc/self/environ; cat /proc/$PPID/environ; exit 1"\n'
        "  timeout: 5\nmax_rounds: 2\n"
    )
    provider = script(tmp_path, competitor=["one", "two"])
    result = cli("improve", task, "--provider", provider, "--run-id", "snoop", "--json")
    assert result.code == 0, result.err
    everything = (
        result.out
        + result.err
        + "".join(
            p.read_text(errors="replace")
            for p in home.rglob("*")
            if p.is_file() and p.suffix != ".db"
        )
    )
    from lessonloop.store import open_store

    with open_store(readonly=True) as store:
        everything += " ".join(
            str(tuple(r))
            for table in ("generations", "role_outputs", "knowledge")
            for r in store.query(f"SELECT * FROM {table}")
        )
    assert "Verifier FAILED" in everything
    for value in secrets.values():
        assert value not in everything and value[:12] not in everything


def test_a_verifier_reading_our_own_process_environment_finds_no_key(run_cli, tmp_path, home):
    """As the same user (or root) a command can read /proc/<pid>/environ of lessonloop itself."""
    task = tmp_path / "snoop.yaml"
    task.write_text(
        "name: snoop2\nprompt: anything\nverifier:\n"
        "  command: \"for f in /proc/[0-9]*/environ; do tr '\\\\0' '\\\\n' < $f; done "
        '2>/dev/null | grep -i key; exit 1"\n  timeout: 10\n'
    )
    output = tmp_path / "out.txt"
    output.write_text("hello")
    secret = "plain-looking-secret-value-42"
    result = run_cli(
        "judge",
        task,
        "--output",
        output,
        "--json",
        env=subprocess_env(home, LESSONLOOP_API_KEY=secret, MY_SERVICE_TOKEN=secret + "b"),
    )
    assert result.code == 0, result.err
    assert json.loads(result.out)["passed_verifier"] is False
    assert secret not in result.out + result.err


def test_the_verifier_report_reaches_the_next_round_without_keys(cli, tmp_path, monkeypatch, home):
    secret = "another-plain-secret-77"
    monkeypatch.setenv("DEPLOY_TOKEN", secret)
    task = tmp_path / "leak.yaml"
    task.write_text(
        f'name: leak\nprompt: p\nverifier:\n  command: "echo {secret}; exit 1"\nmax_rounds: 2\n'
    )
    provider = script(tmp_path, competitor=["a", "b"])
    assert cli("improve", task, "--provider", provider, "--run-id", "leak").code == 0
    analysis = (home / "runs" / "leak" / "generations" / "1" / "analysis.md").read_text()
    assert "Verifier FAILED" in analysis and secret not in analysis


def test_resume_keeps_the_task_the_run_started_with(cli, tmp_path, monkeypatch):
    task = tmp_path / "t.yaml"
    task.write_text(
        'name: keep\nprompt: say ok\nverifier:\n  command: "grep -q ok"\n'
        "max_rounds: 3\nthreshold: 1\n"
    )
    provider = script(tmp_path, competitor=["no", "ok", "ok"])
    from lessonloop.tasks import improve

    real_round = improve.TaskRun._round
    calls = {"n": 0}

    def stop_after_one(self, index):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        real_round(self, index)

    monkeypatch.setattr(improve.TaskRun, "_round", stop_after_one)
    cli("improve", task, "--provider", provider, "--run-id", "keep")
    monkeypatch.setattr(improve.TaskRun, "_round", real_round)
    task.write_text('name: keep\nprompt: changed\nverifier:\n  command: "grep -q zzz"\n')
    script(tmp_path, competitor=["ok", "ok"])
    resumed = cli("resume", "keep", "--json")
    assert resumed.code == 0, resumed.err
    epochs = {g["evaluator_epoch"] for g in cli("status", "keep", "--json").json()["generations"]}
    assert len(epochs) == 1, "one run, one scale"


def test_judge_scores_an_output_as_given_when_it_is_no_reply():
    from lessonloop.tasks.evaluate import _answer
    from lessonloop.tasks.spec import TaskSpec

    code = TaskSpec.model_validate(
        {
            "name": "c",
            "prompt": "p",
            "output_format": "code",
            "language": "python",
            "verifier": {"command": "true"},
        }
    )
    source = (
        'def f():\n    """Usage:\n\n    ```python\n    >>> f()\n    ```\n    """\n    return 1\n'
    )
    assert _answer(source, code) == source  # a fence inside code is no reply
    assert _answer("Here:\n```python\nx = 1\n```\n", code) == "x = 1\n"
    data = TaskSpec.model_validate(
        {"name": "j", "prompt": "p", "output_format": "json", "json_schema": {"type": "array"}}
    )
    assert _answer('[{"a": 1}, {"a": 2}]', data) == '[{"a": 1}, {"a": 2}]'


# --- real endpoints (fake servers): structured output, judge failures, budgets, usage ---------

from ..providers.fake_servers import FakeServer, Reply, openai_completion, route_every_role  # noqa: E402

CONFIG = {
    "service": "billing-api",
    "replicas": 3,
    "port": 8443,
    "tls": True,
    "healthcheck": {"path": "/healthz", "interval_seconds": 10},
    "env": {"LOG_LEVEL": "info", "REGION": "eu-west-1"},
}
REPLY = (
    "I'm sorry you were charged twice for order A-10423: the duplicate charge is refunded "
    "in full within 3-5 business days to your card."
)
ROLES = {
    "You write the output": "competitor",
    "You are a strict judge": "judge",
    "You are the coach": "coach",
    "You are the curator": "curator",
    "You are the designer": "designer",
}


def role_of(received) -> str:
    system = next(
        (
            m.get("content", "")
            for m in (received.body or {}).get("messages", [])
            if m.get("role") == "system"
        ),
        "",
    )
    return next((role for start, role in ROLES.items() if system.startswith(start)), "?")


def answering(**by_role):
    """A responder answering each role (told apart by its system prompt) from its list in
    turn, the last one repeated; ``tokens`` per call: 11 in, 7 out."""
    served: dict[str, int] = {}

    def respond(received) -> Reply:
        role = role_of(received)
        answers = by_role.get(role) or ['{"edits": []}']
        index = served.get(role, 0)
        served[role] = index + 1
        return Reply(body=openai_completion(answers[min(index, len(answers) - 1)]))

    return respond


@pytest.fixture
def endpoint(home, monkeypatch):
    """A fake OpenAI-compatible server every role is routed to."""
    with FakeServer() as server:
        route_every_role(monkeypatch, server, "gpt-test")
        yield server


def posts(server, role=None) -> list:
    return [r for r in server.received if r.method == "POST" and role in (None, role_of(r))]


def test_improve_sends_the_tasks_json_schema_as_structured_output(cli, endpoint):
    endpoint.responder = answering(competitor=[json.dumps(CONFIG)])
    result = cli("improve", EXAMPLES / "service-config.yaml", "--run-id", "cfg", "--json")
    assert result.code == 0, result.err
    assert result.json()["status"] == "completed"
    competitor = posts(endpoint, "competitor")
    assert len(competitor) == 2, "valid twice: threshold reached and confirmed"
    response_format = competitor[0].body["response_format"]
    assert response_format["type"] == "json_schema"
    schema = response_format["json_schema"]["schema"]
    assert schema["required"] == ["service", "replicas", "port", "tls", "healthcheck", "env"]
    assert set(schema["properties"]["env"]["properties"]) == {"LOG_LEVEL", "REGION"}, (
        "required keys a grammar would otherwise leave out are listed"
    )
    prompt = competitor[0].text
    assert "additionalProperties" not in prompt and "JSON Schema" not in prompt, (
        "the schema goes through structured output, not the words"
    )
    assert '"env": {"LOG_LEVEL": <string>, "REGION": <string>}' in prompt, "a one-line example"
    coach = posts(endpoint, "coach")
    assert coach and coach[0].body["response_format"]["type"] == "json_schema"


def test_an_off_schema_answer_is_counted_and_scored_invalid(cli, endpoint):
    endpoint.responder = answering(
        competitor=["Sure! Here is the config: replicas three."], coach=["no lessons"]
    )
    result = cli("improve", EXAMPLES / "service-config.yaml", "--run-id", "off", "--json")
    assert result.code == 1, "a run that never produced a usable output is no success"
    assert "no round produced an output in the task's format (2 rounds)" in result.error()["error"]
    assert cli("status", "off", "--json").json()["run"]["status"] == "failed"
    generations = cli("status", "off", "--json").json()["generations"]
    assert [g["mean_score"] for g in generations] == [0.0, 0.0]
    analysis = cli("show", "off", "--generation", 1, "--json").json()["generation"]
    assert "does not match the format" in json.dumps(analysis)
    usage = cli("usage", "--run", "off", "--json").json()
    # each answer failed its schema after the provider's repair round: 2 calls per attempt
    assert usage["by_role"]["competitor"]["calls"] == 4 == len(posts(endpoint, "competitor"))
    assert usage["by_role"]["coach"]["calls"] == 2
    assert usage["by_role"]["competitor"]["input_tokens"] == 4 * 11


RUBRIC_TASK = """name: reply-check
prompt: Write a one-line reply to a customer charged twice for order A-10423.
rubric:
  - {name: empathy, weight: 1, description: kind}
  - {name: accuracy, weight: 1, description: right}
required_strings: ["A-10423"]
max_rounds: 3
"""
GARBLED = json.dumps({"reasoning": '"},"', "dimensions": {"empathy": 0, "accuracy": 0}})


@pytest.mark.parametrize(
    "verdict, calls",
    [
        (GARBLED, 1),  # valid JSON, no usable verdict
        ('"},"', 2),  # not JSON: one repair, counted
        (json.dumps({"reasoning": "fine", "dimensions": {"empathy": "high", "accuracy": 1}}), 2),
    ],
)
def test_judge_reports_an_unusable_verdict_as_a_failure_not_a_zero(
    cli, endpoint, tmp_path, verdict, calls
):
    task = tmp_path / "task.yaml"
    task.write_text(RUBRIC_TASK)
    output = tmp_path / "reply.txt"
    output.write_text(REPLY)
    endpoint.responder = answering(judge=[verdict])
    result = cli("judge", task, "--output", output, "--json")
    assert result.code == 1, result.out
    assert result.out == ""
    assert "the judge gave no usable verdict" in result.error()["error"]
    judge_requests = posts(endpoint, "judge")
    assert judge_requests[0].body["response_format"]["type"] == "json_schema"
    usage = cli("usage", "--json").json()
    assert usage["by_role"]["judge"]["calls"] == calls == len(judge_requests)


def test_judge_gives_a_validated_verdict(cli, endpoint, tmp_path):
    task = tmp_path / "task.yaml"
    task.write_text(RUBRIC_TASK)
    output = tmp_path / "reply.txt"
    output.write_text(REPLY)
    endpoint.responder = answering(
        judge=[
            json.dumps(
                {"reasoning": "Kind and right.", "dimensions": {"empathy": 0.8, "accuracy": 0.6}}
            )
        ]
    )
    verdict = cli("judge", task, "--output", output, "--json")
    assert verdict.code == 0, verdict.err
    assert verdict.json()["dimensions"] == {"empathy": 0.8, "accuracy": 0.6}
    assert verdict.json()["score"] == pytest.approx(0.7)


def test_improve_records_judge_failures_as_such(cli, endpoint, tmp_path):
    task = tmp_path / "task.yaml"
    task.write_text(RUBRIC_TASK)
    endpoint.responder = answering(competitor=[REPLY, REPLY + " Sorry again."], judge=[GARBLED])
    result = cli("improve", task, "--run-id", "jf", "--json")
    assert result.code == 1
    assert "the judge gave no usable verdict 2 rounds in a row" in result.error()["error"]
    status = cli("status", "jf", "--json").json()
    assert status["run"]["status"] == "failed"
    assert [g["gate_decision"] for g in status["generations"]] == ["judge_failed"] * 2
    assert not (tmp_path / "home" / "runs" / "jf" / "best_output.txt").exists()
    second_prompt = posts(endpoint, "competitor")[1].text
    assert "was not scored (the judge failed)" in second_prompt
    assert "scored 0.000" not in second_prompt


def test_improve_stops_cleanly_when_its_call_budget_is_spent_and_continues(cli, tmp_path):
    provider = script(tmp_path, competitor=[fenced(BAD_SQL), fenced(GOOD_SQL), fenced(GOOD_SQL)])
    task = EXAMPLES / "sql-top-customers.yaml"
    result = cli(
        "improve", task, "--provider", provider, "--run-id", "b1", "--max-calls", 1, "--json"
    )
    assert result.code == 0, result.err
    summary = result.json()
    assert summary["status"] == "stopped"
    assert "calls budget spent (1 of 1 calls)" in summary["stop_reason"]
    assert f"lessonloop improve {task} --run-id b1 --max-calls N" in summary["stop_reason"]
    assert len(cli("status", "b1", "--json").json()["generations"]) == 1
    script(tmp_path, competitor=[fenced(GOOD_SQL)])  # the run keeps its route (this file)
    resumed = cli("improve", task, "--run-id", "b1", "--max-calls", 4, "--json")
    assert resumed.code == 0, resumed.err
    assert resumed.json()["status"] == "completed"
    assert [g["mean_score"] for g in cli("status", "b1", "--json").json()["generations"]] == [
        0.0,
        1.0,
        1.0,
    ]
    assert cli("usage", "--run", "b1", "--json").json()["calls"] <= 4


def test_improve_stops_when_its_token_budget_is_spent(cli, endpoint):
    endpoint.responder = answering(competitor=[json.dumps(CONFIG)])
    result = cli(
        "improve", EXAMPLES / "service-config.yaml", "--run-id", "t1", "--max-tokens", 10, "--json"
    )
    assert result.code == 0, result.err
    assert result.json()["status"] == "stopped"
    assert "tokens budget spent (18 of 10 tokens)" in result.json()["stop_reason"]
    assert len(posts(endpoint)) == 1


@pytest.mark.parametrize("flag", ["--max-calls", "--max-tokens"])
def test_budgets_must_be_positive(cli, tmp_path, flag):
    provider = script(tmp_path, competitor=["x"])
    for command in (["improve", EXAMPLES / "sql-top-customers.yaml"], ["solve", "a haiku"]):
        result = cli(*command, "--provider", provider, flag, 0, "--json")
        assert result.code == 2 and flag in result.error()["error"]


DESIGN = {
    "name": "greeting",
    "prompt": "Write a greeting that contains the word hello.",
    "output_format": "text",
    "required_strings": ["hello"],
    "verifier": {"command": "grep -q hello {file}", "timeout": 5},
    "threshold": 1.0,
    "max_rounds": 3,
}


def test_solve_counts_designing_against_its_budget(cli, tmp_path, home):
    provider = script(
        tmp_path,
        designer=[json.dumps(DESIGN)],
        competitor=["hi there", "hello world", "hello world!"],
    )
    result = cli("solve", "a friendly greeting", "--provider", provider, "--max-calls", 2, "--json")
    assert result.code == 0, result.err
    summary = result.json()
    assert (
        summary["status"] == "stopped"
        and "calls budget spent (1 of 1 calls)" in summary["stop_reason"]
    ), "1 call designing, so the run had 1 left"
    assert "designed task saved" in result.err
    usage = cli("usage", "--json").json()
    assert usage["by_role"]["designer"]["calls"] == 1 and usage["calls"] == 2

    only_design = cli(
        "solve", "a friendly greeting", "--provider", provider, "--max-calls", 1, "--json"
    )
    assert only_design.code == 0, only_design.err
    stopped = only_design.json()
    assert stopped["status"] == "stopped" and "budget spent designing" in stopped["stop_reason"]
    assert (home / "tasks" / "greeting-2.yaml").exists()


def test_solve_with_a_token_budget_stops_the_run(cli, endpoint):
    design = {
        "name": "Refund reply!",
        "prompt": "Write a refund reply for order A-1.",
        "output_format": "text",
        "language": "",
        "required_concepts": [],
        "rubric": [{"name": "empathy", "weight": 1, "description": "kind"}],
    }
    endpoint.responder = answering(
        designer=[json.dumps(design)],
        competitor=["Sorry about A-1."],
        judge=[json.dumps({"reasoning": "Kind enough.", "dimensions": {"empathy": 0.9}})],
    )
    result = cli("solve", "a refund reply", "--max-tokens", 40, "--json")
    assert result.code == 0, result.err
    designer = posts(endpoint, "designer")
    assert len(designer) == 1
    schema = designer[0].body["response_format"]["json_schema"]["schema"]
    assert {"name", "prompt", "output_format", "rubric"} <= set(schema["required"])
    assert "name: Refund reply" in result.err, "a name with other characters is made valid"
    summary = result.json()
    assert summary["status"] == "stopped" and "tokens budget spent" in summary["stop_reason"]
    assert len(posts(endpoint)) == 3, "design 18, competitor 18 (36 < 40), judge 18: then spent"
