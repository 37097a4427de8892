"""Signals: error lines from failed tools only, normalization, feedback as lessons, prompt checks."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessonloop.memory.commands import command_core, command_head, command_key
from lessonloop.memory.error_lines import normalize_error
from lessonloop.memory.feedback import Feedback, prompt_feedback
from lessonloop.memory.prompt_check import prompt_check
from lessonloop.memory.tool_errors import ErrorSignal, subject_of, tool_errors

PYTEST_FAIL = """============================= test session starts ==============================
collected 3 items

tests/test_x.py .F.                                                      [100%]

=================================== FAILURES ===================================
___________________________________ test_a ____________________________________

    def test_a():
>       assert parse("1") == 2
E       AssertionError: assert 1 == 2
E        +  where 1 = parse('1')

tests/test_x.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_x.py::test_a - AssertionError: assert 1 == 2
========================= 1 failed, 2 passed in 0.12s =========================="""

TRACEBACK = """Traceback (most recent call last):
  File "/home/u/app.py", line 3, in <module>
    import foo
ModuleNotFoundError: No module named 'foo'"""

CHAINED = """Traceback (most recent call last):
  File "a.py", line 2, in <module>
    d["x"]
KeyError: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "a.py", line 4, in <module>
    raise RuntimeError("lookup failed")
RuntimeError: lookup failed"""

SOURCE = """class ValidationError(Exception):
    \"\"\"Error: raised on bad input.\"\"\"

def parse(text):
    raise ValidationError("FAILED to parse")  # fatal: never
Traceback (most recent call last):
ValueError: inside a docstring
npm ERR! in a comment
"""


def bash(command, stdout="", stderr="", **extra):
    return tool_errors(
        "Bash",
        {"command": command},
        {"stdout": stdout, "stderr": stderr, "interrupted": False, **extra},
    )


def lines(found: list[ErrorSignal]) -> list[str]:
    return [e.line for e in found]


# ------------------------------------------------------------------------------------------
# tool_errors: positives


def test_pytest_failure_gives_the_summary_line_first_then_the_assertion():
    found = bash("pytest -q", stdout=PYTEST_FAIL)
    assert lines(found)[0] == "FAILED tests/test_x.py::test_a - AssertionError: assert 1 == 2"
    assert "AssertionError: assert 1 == 2" in lines(found)
    assert "1 failed, 2 passed in 0.12s" in lines(found)
    assert all(e.tool == "Bash" and e.subject == "pytest -q" for e in found)
    assert len(found) <= 5


def test_a_traceback_gives_its_exception_line():
    found = bash("python app.py", stderr=TRACEBACK)
    assert lines(found) == ["ModuleNotFoundError: No module named 'foo'"]
    assert found[0].normalized == "modulenotfounderror: no module named <q>"


def test_a_chained_traceback_puts_the_last_exception_first():
    found = bash("python a.py", stderr=CHAINED)
    assert lines(found)[:2] == ["RuntimeError: lookup failed", "KeyError: 'x'"]


@pytest.mark.parametrize(
    "command, stdout, stderr, expected",
    [
        (
            "node server.js",
            "",
            "Error: listen EADDRINUSE: address already in use :::3000\n"
            "    at Server.setupListenHandle [as _listen2] (node:net:1817:16)",
            "Error: listen EADDRINUSE: address already in use :::3000",
        ),
        (
            "cargo build",
            "",
            "   Compiling x v0.1.0\nerror[E0308]: mismatched types\n --> src/main.rs:2:18",
            "error[E0308]: mismatched types",
        ),
        (
            "make build",
            "gcc -o x x.c\nx.c:3:5: error: expected ';' before '}' token\n"
            "make: *** [Makefile:3: x] Error 1",
            "",
            "x.c:3:5: error: expected ';' before '}' token",
        ),
        (
            "git push",
            "",
            "fatal: The current branch x has no upstream branch.",
            "fatal: The current branch x has no upstream branch.",
        ),
        (
            "npm install",
            "",
            "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\n"
            "npm ERR! A complete log of this run can be found in: /root/.npm/_logs/x.log",
            "npm ERR! code ERESOLVE",
        ),
        ("foo --bar", "", "bash: foo: command not found", "bash: foo: command not found"),
        ("cd web && npm test", "> jest\nsh: 1: jest: not found", "", "sh: 1: jest: not found"),
        (
            "python manage.py migrate",
            "",
            "django.db.utils.OperationalError: no such table: users",
            "django.db.utils.OperationalError: no such table: users",
        ),
        (
            "pip install nope",
            "",
            "ERROR: Could not find a version that satisfies the requirement nope",
            "ERROR: Could not find a version that satisfies the requirement nope",
        ),
        (
            "npx tsc",
            "src/a.ts(3,5): error TS2345: Argument of type 'string' is not assignable",
            "",
            "src/a.ts(3,5): error TS2345: Argument of type 'string' is not assignable",
        ),
        (
            "go test ./...",
            "--- FAIL: TestParse (0.00s)\nFAIL\tgithub.com/x/y\t0.01s",
            "",
            "FAIL\tgithub.com/x/y\t0.01s",
        ),
        (
            "cargo run",
            "",
            "thread 'main' panicked at src/main.rs:4:5:\nindex out of bounds",
            "thread 'main' panicked at src/main.rs:4:5:",
        ),
    ],
)
def test_command_failures_are_found(command, stdout, stderr, expected):
    assert lines(bash(command, stdout, stderr))[0] == expected


def test_a_non_zero_exit_without_error_lines_still_reports_a_failure():
    assert lines(bash("./run.sh", stdout="done", exit_code=3)) == ["Exit code 3"]
    assert lines(bash("./run.sh", stderr="could not reach host", returncode=2)) == [
        "could not reach host"
    ]


def test_transcript_style_bash_failure_string_uses_its_exit_code():
    text = "Exit code 1\nChecking...\nFound 3 errors."
    found = tool_errors("Bash", {"command": "ruff check ."}, {"content": text, "is_error": True})
    assert lines(found) == ["Found 3 errors."]


def test_flagged_tool_results_and_tool_error_strings_count():
    edit = tool_errors(
        "Edit",
        {"file_path": "/p/a.py"},
        {"is_error": True, "content": "String to replace not found in file.\nString: foo"},
    )
    assert lines(edit) == ["String to replace not found in file."] and edit[0].subject == "/p/a.py"
    read = tool_errors(
        "Read", {"file_path": "/p/none.py"}, "<tool_use_error>File does not exist.</tool_use_error>"
    )
    assert lines(read) == ["File does not exist."]
    mcp = tool_errors(
        "mcp__db__query",
        {"sql": "select 1"},
        {
            "content": [{"type": "text", "text": 'Error: relation "users" does not exist'}],
            "isError": True,
        },
    )
    assert lines(mcp) == ['Error: relation "users" does not exist']
    assert mcp[0].normalized == "error: relation <q> does not exist"
    failure = tool_errors(
        "Write", {"file_path": "/p/b.py"}, {"error": "EACCES: permission denied", "is_error": True}
    )
    assert lines(failure) == ["EACCES: permission denied"]
    plain = tool_errors("mcp__x__y", {}, "Error: upstream timed out")
    assert lines(plain) == ["Error: upstream timed out"]


# ------------------------------------------------------------------------------------------
# tool_errors: negatives (precision: reading is not failing)


@pytest.mark.parametrize(
    "tool, tool_input, response",
    [
        (
            "Read",
            {"file_path": "/p/errors.py"},
            {"type": "text", "file": {"filePath": "/p/errors.py", "content": SOURCE}},
        ),
        ("Read", {"file_path": "/p/errors.py"}, SOURCE),
        (
            "Read",
            {"file_path": "/p/app.log"},
            "2024-05-01 12:00:00 ERROR: connection refused\n" * 50,
        ),
        (
            "Grep",
            {"pattern": "Error", "path": "src"},
            "src/a.py:1:class ValidationError(Exception):\nsrc/b.py:9:FAILED",
        ),
        (
            "Grep",
            {"pattern": "Error"},
            {"mode": "content", "content": "Error: x\nfatal: y", "numFiles": 2},
        ),
        ("Glob", {"pattern": "**/*Error*.py"}, {"filenames": ["src/ValidationError.py"]}),
        ("NotebookRead", {"notebook_path": "/p/a.ipynb"}, [{"type": "text", "text": TRACEBACK}]),
        ("WebFetch", {"url": "https://example.com"}, "Error: 404 page about errors\nTraceback"),
        ("WebSearch", {"query": "TypeError"}, "TypeError: cannot read properties - 10 results"),
        (
            "Task",
            {"prompt": "run tests"},
            "The tests failed earlier with AssertionError; now fixed.",
        ),
        (
            "Edit",
            {"file_path": "/p/a.py", "old_string": "a", "new_string": "b"},
            {
                "filePath": "/p/a.py",
                "oldString": "a",
                "originalFile": SOURCE,
                "structuredPatch": [],
            },
        ),
        (
            "Write",
            {"file_path": "/p/a.py", "content": SOURCE},
            {"type": "create", "filePath": "/p/a.py", "content": SOURCE},
        ),
        ("Edit", {"file_path": "/p/a.py"}, "The file /p/a.py has been updated. Error: in new text"),
        (
            "TodoWrite",
            {"todos": []},
            {"newTodos": [{"content": "Fix the TypeError", "status": "pending"}]},
        ),
    ],
)
def test_reads_and_contents_never_count(tool, tool_input, response):
    assert tool_errors(tool, tool_input, response) == []


@pytest.mark.parametrize(
    "command, stdout, stderr",
    [
        (
            "grep -rn Error src/",
            "src/a.py:3:class ValidationError(Exception):\n"
            "src/b.py:9:    raise ValueError('error: x')\nlogs/c.log:1:ERROR: boom",
            "",
        ),
        (
            "rg -n 'FAILED|fatal:' .",
            "ci.log:10:FAILED tests/a.py::t\nnotes.md:2:fatal: example",
            "",
        ),
        ('cd src && grep -rn "Error\\|Exception" . | head -50', SOURCE, ""),
        ("cat app.log", "2024-01-01 ERROR: failed to connect\n" + TRACEBACK, ""),
        ("tail -n 100 /var/log/app.log | grep -i error", "ERROR: disk full\nfatal: x", ""),
        (
            "git log --oneline -5",
            "abc1234 Fix AssertionError in parser\ndef5678 error: handle None",
            "",
        ),
        ("git diff", "-    raise ValueError('x')\n+    raise TypeError('error: y')", ""),
        ("git show HEAD:src/errors.py", SOURCE, ""),
        (
            "git commit -m 'Fix TypeError: None has no attribute'",
            "[main 1a2b3c4] Fix TypeError: None has no attribute\n 1 file changed",
            "",
        ),
        ("echo 'Error: not real'", "Error: not real", ""),
        ("sed -n '1,40p' src/errors.py", SOURCE, ""),
        ("jq .errors report.json", '[{"error": "fatal: x"}]', ""),
        ("pytest -q", "...\n3 passed in 0.05s", ""),
        ("mypy src", "Success: no issues found in 12 source files", ""),
        ("python check.py", "Found 0 errors in 3 files\nerror_count=0\nAll checks passed", ""),
        (
            "pip install -e .",
            "Successfully installed proj-0.1",
            "WARNING: You are using pip version 21",
        ),
        ("git checkout -b feature", "", "Switched to a new branch 'feature'"),
        ("npm install", "added 12 packages", "npm WARN deprecated inflight@1.0.6: not supported"),
        ("ls -la", "-rw-r--r-- 1 u u 10 errors.log\n-rw-r--r-- 1 u u 10 FAILED.txt", ""),
    ],
)
def test_command_output_that_merely_mentions_errors_is_not_a_failure(command, stdout, stderr):
    assert bash(command, stdout, stderr) == []


@pytest.mark.parametrize(
    "output",
    [
        "120 passed, 0 failed in 3.2s",
        "3 passed, 0 failed",
        "Tests: 0 failed, 12 passed",
        "BUILD SUCCESSFUL: 0 failed tasks",
        "0 errors",
        "Found 0 errors in 3 files",
        "3 passed, 0 errors in 2.1s",
        "Compiled with 0 errors and 2 warnings",
    ],
)
def test_zero_counts_are_success_summaries_not_failures(output):
    for stream in ("stdout", "stderr"):
        assert bash("pytest -q", **{stream: output}) == [], stream
    assert tool_errors("Bash", {"command": "pytest -q"}, output) == []


@pytest.mark.parametrize(
    "output",
    [
        "120 passed, 1 failed in 3.2s",
        "Tests: 10 failed, 12 passed",
        "BUILD FAILED: 2 failed tasks",
    ],
)
def test_non_zero_counts_still_report_failures(output):
    assert lines(bash("pytest -q", stdout=output)) == [output]
    assert lines(bash("pytest -q", stdout="3 passed, 2 errors in 0.3s", exit_code=1)) == [
        "3 passed, 2 errors in 0.3s"
    ]


def test_no_match_exit_codes_of_search_commands_are_not_failures():
    assert bash("grep -q needle haystack.txt", exit_code=1) == []
    assert (
        tool_errors(
            "Bash", {"command": "diff a b"}, {"content": "Exit code 1\n< a\n> b", "is_error": True}
        )
        == []
    )
    # ...but their own complaints are
    found = bash(
        "grep -rn x missing/", stderr="grep: missing/: No such file or directory", exit_code=2
    )
    assert lines(found) == ["grep: missing/: No such file or directory"]
    found = bash("cat nope.txt", stderr="cat: nope.txt: No such file or directory")
    assert found[0].normalized == "cat: <path>: no such file or directory"


def test_an_interrupted_command_without_errors_is_not_a_failure():
    assert bash("sleep 100", interrupted=True) == []


@pytest.mark.parametrize(
    "tool, tool_input, response",
    [
        (None, None, None),
        ("Bash", None, None),
        ("", "", ""),
        ("Bash", "ls", ["a", {"x": [1, None]}]),
        ("Bash", {"command": 5}, {"stdout": 5, "stderr": None, "exit_code": "x"}),
        ("Bash", {"command": ["pytest", "-q"]}, {"stdout": PYTEST_FAIL}),
        ("Read", [], {"file": None}),
        ("Edit", {"file_path": None}, {"is_error": True}),
        ("mcp__x", {"a": {"b": {"c": [1, 2, {"d": None}]}}}, {"content": [[[["deep"]]]]}),
        (123, object(), object()),
        ("Bash", {"command": "x"}, b"bytes \xff"),
        ("Bash", {"command": "'unbalanced \"quotes"}, {"stdout": "x", "stderr": "error: y"}),
    ],
)
def test_any_shape_never_raises(tool, tool_input, response):
    found = tool_errors(tool, tool_input, response)
    assert isinstance(found, list) and all(isinstance(e, ErrorSignal) for e in found)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=50),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "stdout",
                    "stderr",
                    "is_error",
                    "content",
                    "error",
                    "exit_code",
                    "text",
                    "type",
                    "command",
                    "file_path",
                    "isError",
                    "output",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["Bash", "Read", "Edit", "mcp__a__b", "Grep", "Task", "X"]),
    json_values,
    json_values,
)
def test_random_payloads_never_raise(tool, tool_input, response):
    for e in tool_errors(tool, tool_input, response):
        assert len(e.line) <= 500 and len(e.subject) <= 300


def test_lines_are_redacted_before_they_are_capped():
    key = "sk-ant-api03-" + "A1b2C3d4E5" * 9 + "xyzAA"
    stderr = "Error: " + "x" * 480 + " bad key " + key
    found = bash(f"ANTHROPIC_API_KEY={key} ./deploy.sh", stderr=stderr)
    assert found and len(found[0].line) <= 500
    assert "sk-ant" not in found[0].line and key[20:40] not in found[0].line
    assert "[REDACTED:anthropic-api-key]" in found[0].subject and key not in found[0].subject
    long_cmd = "pytest " + "-k x " * 200
    assert len(bash(long_cmd, stderr="error: boom")[0].subject) == 300
    pw = bash("psql", stderr="FATAL: password authentication failed: password=Tr0ub4dor-x9")
    assert "Tr0ub4dor" not in pw[0].line and "Tr0ub4dor" not in pw[0].normalized


def test_at_most_five_lines_per_call():
    stderr = "\n".join(f"src/m{i}.c:{i}:1: error: thing {i} undeclared" for i in range(40))
    found = bash("make", stderr=stderr)
    assert len(found) == 1  # the same normalized error counts once
    distinct = "\n".join(
        f"src/m.c:{i}:1: error: {w} undeclared"
        for i, w in enumerate(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"])
    )
    assert len(bash("make", stderr=distinct)) == 5


def test_a_typical_payload_is_fast():
    stdout = "\n".join(f"tests/test_{i}.py::test_x PASSED" for i in range(200)) + "\n" + PYTEST_FAIL
    payloads = [
        ({"command": "pytest -v"}, {"stdout": stdout, "stderr": ""}),
        ({"command": "npm test"}, {"stdout": "ok\n" * 300, "stderr": TRACEBACK}),
    ]
    for tool_input, response in payloads:
        tool_errors("Bash", tool_input, response)
        start = time.perf_counter()
        for _ in range(50):
            tool_errors("Bash", tool_input, response)
        per_call = (time.perf_counter() - start) / 50 * 1000
        print(f"tool_errors: {per_call:.3f} ms per call")
        assert per_call < 50  # a sanity bound; typically well under 1 ms
    huge = {"stdout": "building thing ok\n" * 100_000, "stderr": "x.c:1:1: error: boom"}
    start = time.perf_counter()
    assert lines(tool_errors("Bash", {"command": "make"}, huge)) == ["x.c:1:1: error: boom"]
    print(f"tool_errors on 1.8 MB: {(time.perf_counter() - start) * 1000:.1f} ms")


# ------------------------------------------------------------------------------------------
# commands and subjects


@pytest.mark.parametrize(
    "command, head",
    [
        ("pytest -q", "pytest"),
        ("cd /p && PYTHONPATH=src python -m pytest -q tests", "pytest"),
        ("uv run pytest -x", "pytest"),
        ("npm run build", "npm run build"),
        ("npm test", "npm test"),
        ("git push origin main", "git push"),
        ("sudo timeout 10 make test", "make test"),
        ("python manage.py migrate", "manage.py migrate"),
        ("python app.py --x", "python app.py"),
        ("npx jest src", "jest"),
        ("source .venv/bin/activate && pytest", "pytest"),
        ("cd web", ""),
        ("", ""),
        # a line continuation after a separator (spotter-ae4a77f8, line 908) is a space
        (
            "source spotter-plugin/scripts/lib/trace_context.sh && \\\nspotter_rand_hex 16 | grep -E "
            "'^[0-9a-f]{32}$' && echo ok",
            "spotter_rand_hex",
        ),
        ("cd /p && \\\n  cargo test", "cargo test"),
    ],
)
def test_command_head(command, head):
    assert command_head(command) == head


def test_command_core_and_subject():
    assert command_core("cd /p && export A=1 && pytest -q") == "pytest -q"
    assert subject_of("Bash", {"command": "  ls -la  "}) == "ls -la"
    assert subject_of("Edit", {"file_path": "/p/a.py", "old_string": "x"}) == "/p/a.py"
    assert subject_of("Grep", {"pattern": "TODO", "path": "src"}) == "TODO in src"
    assert subject_of("mcp__db__q", {"sql": "select 1", "limit": 5}) == "sql=select 1 limit=5"
    assert subject_of("X", None) == ""


@pytest.mark.parametrize(
    "a, b",
    [
        ("pytest -q 2>&1 | tail -20", "pytest -q"),
        ("pytest -q > out.txt", "pytest -q"),
        ("git status && pnpm test", "pnpm test"),
        ("pnpm  test", "pnpm test"),
    ],
)
def test_command_key_ignores_output_filters_and_redirections(a, b):
    assert command_key(a) == command_key(b) == b


@pytest.mark.parametrize(
    "a, b",
    [
        ("cd backend && pytest", "pytest"),
        ("FOO=1 pytest", "pytest"),
        ("sudo npm i -g x", "npm i -g x"),
        ("pnpm test -- --run", "pnpm test"),
    ],
)
def test_command_key_keeps_what_may_have_changed(a, b):
    assert command_key(a) != command_key(b)


# ------------------------------------------------------------------------------------------
# normalize_error


@pytest.mark.parametrize(
    "a, b",
    [
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/a1b2/x.py'",
            "FileNotFoundError: [Errno 2] No such file or directory: '/home/u/proj/y.py'",
        ),
        ("SyntaxError: invalid syntax at line 12", "SyntaxError: invalid syntax at line 340"),
        (
            "<Foo object at 0x7f3a2b1c9d00> is not callable",
            "<Foo object at 0x7f00deadbeef> is not callable",
        ),
        ("src/a.py:12:5: error: undefined name 'x'", "lib/b/c.py:340:1: error: undefined name 'y'"),
        (
            "Timeout after 2024-05-01T10:11:12Z (pid 4242)",
            "Timeout after 2025-12-31 23:59:59 (pid 7)",
        ),
        (
            "request 550e8400-e29b-41d4-a716-446655440000 failed",
            "request 6ba7b810-9dad-11d1-80b4-00c04fd430c8 failed",
        ),
        ("commit 1a2b3c4d5e6f not found", "commit 9f8e7d6c5b4a not found"),
        ("connect ECONNREFUSED 127.0.0.1:5432", "connect ECONNREFUSED 10.0.0.7:6543"),
        (
            "listen EADDRINUSE: address already in use :::3000",
            "listen EADDRINUSE: address already in use :::8080",
        ),
        ("cannot write /tmp/tmpab12cd_x/out", "cannot write /tmp/tmpzz99yy_q/out"),
        ("KeyError:   'name'", "keyerror: 'id'"),
        (
            "fetch https://api.example.com/v1/users?id=3 failed",
            "fetch http://localhost:8000/x failed",
        ),
        ("took 12ms then failed", "took 340ms then failed"),
        (
            'ModuleNotFoundError: No module named "requests"',
            "ModuleNotFoundError: No module named 'numpy'",
        ),
    ],
)
def test_recurrences_normalize_equal(a, b):
    assert normalize_error(a) == normalize_error(b)


@pytest.mark.parametrize(
    "a, b",
    [
        ("ValueError: bad input", "TypeError: bad input"),
        ("ModuleNotFoundError: No module named 'x'", "ImportError: cannot import name 'x'"),
        ("error[E0308]: mismatched types", "error[E0382]: borrow of moved value"),
        ("npm ERR! code ERESOLVE", "npm ERR! code E404"),
        ("fatal: not a git repository", "fatal: remote origin already exists"),
        ("error TS2345: Argument of type", "error TS2322: Type is not assignable"),
    ],
)
def test_different_errors_stay_different(a, b):
    assert normalize_error(a) != normalize_error(b)


def test_normalized_form_is_masked_lowercase_and_collapsed():
    assert (
        normalize_error("FileNotFoundError: [Errno 2] No such file or directory: '/tmp/a1b2/x.py'")
        == "filenotfounderror: [errno <n>] no such file or directory: <path>"
    )
    assert normalize_error("  SyntaxError:\tinvalid   syntax  ") == "syntaxerror: invalid syntax"
    assert normalize_error("<object at 0x7f3a>") == "<object at <hex>>"
    assert len(normalize_error("E" * 5000)) <= 300
    assert normalize_error(None) == "" and normalize_error("") == ""


# ------------------------------------------------------------------------------------------
# prompt_feedback: the examples, exactly


@pytest.mark.parametrize(
    "prompt, kind, lesson, user_scope",
    [
        ("I prefer pnpm over npm", "preference", "Use pnpm instead of npm", True),
        (
            "always run the tests before committing",
            "rule",
            "Run the tests before committing",
            False,
        ),
        ("never push to main directly", "rule", "Never push to main directly", False),
        ("from now on we use Postgres 16", "decision", "Use Postgres 16", False),
        ("let's go with the adapter pattern", "decision", "Go with the adapter pattern", False),
        (
            "Let's go with PaymentIntents instead of the Charges API — decided.",
            "decision",
            "Go with PaymentIntents instead of the Charges API",
            False,
        ),
        (
            "We'll use Terraform Cloud for remote state rather than the S3 backend; decided.",
            "decision",
            "Use Terraform Cloud for remote state rather than the S3 backend",
            False,
        ),
        (
            "We are going to stick with Postgres for the queue.",
            "decision",
            "Stick with Postgres for the queue",
            False,
        ),
        (
            "no, that's wrong \u2014 use tabs not spaces",
            "correction",
            "Use tabs, not spaces",
            False,
        ),
        (
            "don't mock the database in these tests",
            "correction",
            "Don't mock the database in these tests",
            False,
        ),
        ("perfect, that's exactly right", "confirmation", "", False),
        ("yes that works", "confirmation", "", False),
    ],
)
def test_the_documented_examples(prompt, kind, lesson, user_scope):
    found = prompt_feedback(prompt)
    assert [(f.kind, f.lesson, f.user_scope) for f in found] == [(kind, lesson, user_scope)]
    assert found[0].text == prompt


@pytest.mark.parametrize(
    "prompt, kind, lesson, user_scope",
    [
        ("I always use uv for Python projects.", "preference", "Use uv for Python projects", True),
        ("I never use default exports.", "preference", "Never use default exports", True),
        ("I prefer to write the tests first.", "preference", "Write the tests first", True),
        ("I prefer not to use classes here.", "preference", "Don't use classes here", True),
        ("I'd prefer small functions.", "preference", "Prefer small functions", True),
        ("I prefer using ruff over flake8", "preference", "Use ruff instead of flake8", True),
        ("I like to keep commits small.", "preference", "Keep commits small", True),
        ("We prefer tabs to spaces.", "preference", "Use tabs instead of spaces", False),
        ("Please always use type hints.", "rule", "Use type hints", False),
        ("You should never commit the .env file!", "rule", "Never commit the .env file", False),
        ("In this repo, we always squash merge.", "rule", "Squash merge", False),
        ("Don't ever force-push to main.", "rule", "Never force-push to main", False),
        (
            "Whenever you change the schema, run the migrations.",
            "rule",
            "When you change the schema, run the migrations",
            False,
        ),
        ("Before committing, always run ruff.", "rule", "Before committing, run ruff", False),
        (
            "Going forward, use pytest fixtures instead of setUp.",
            "decision",
            "Use pytest fixtures instead of setUp",
            False,
        ),
        ("Use `pnpm` not `npm` from now on.", "decision", "Use `pnpm`, not `npm`", False),
        ("We decided to keep the API stable.", "decision", "Keep the API stable", False),
        ("We've decided on FastAPI.", "decision", "Use FastAPI", False),
        ("Let's stick with SQLite.", "decision", "Stick with SQLite", False),
        (
            "From now on, never edit generated files.",
            "decision",
            "Never edit generated files",
            False,
        ),
        (
            "Do not add new dependencies without asking.",
            "correction",
            "Don't add new dependencies without asking",
            False,
        ),
        (
            "Stop adding comments to every line.",
            "correction",
            "Stop adding comments to every line",
            False,
        ),
        (
            "Nope, put the config in pyproject.toml.",
            "correction",
            "Put the config in pyproject.toml",
            False,
        ),
        ("Actually, use the v2 endpoint.", "correction", "Use the v2 endpoint", False),
        ("Prefer pathlib over os.path.", "preference", "Use pathlib instead of os.path", False),
        (
            "Always prefer composition over inheritance.",
            "rule",
            "Prefer composition over inheritance",
            False,
        ),
        ("btw never log user emails", "rule", "Never log user emails", False),
        ("Important: never commit secrets.", "rule", "Never commit secrets", False),
        ("Remember to always run black.", "rule", "Run black", False),
        ("Decision: use Redis for the queue.", "decision", "Use Redis for the queue", False),
        ("We agreed on weekly releases.", "decision", "Use weekly releases", False),
        (
            "in the future, ask before running migrations",
            "decision",
            "Ask before running migrations",
            False,
        ),
        ("no, don't use regex for this", "correction", "Don't use regex for this", False),
        (
            "Please don't add emojis to commit messages.",
            "correction",
            "Don't add emojis to commit messages",
            False,
        ),
        ("Never use `eval` on user input.", "rule", "Never use `eval` on user input", False),
    ],
)
def test_more_lessons(prompt, kind, lesson, user_scope):
    assert [(f.kind, f.lesson, f.user_scope) for f in prompt_feedback(prompt)] == [
        (kind, lesson, user_scope)
    ]


@pytest.mark.parametrize(
    "prompt, kind, lesson, user_scope",
    [
        # the user's wording turned into the instruction, what it replaces kept
        (
            "Don't use npm in this repo, always use pnpm.",
            "correction",
            "Use pnpm in this repo, not npm",
            False,
        ),
        (
            "Stop using print for debugging, use the logging module.",
            "correction",
            "Use the logging module for debugging, not print",
            False,
        ),
        ("Never use requests, always use httpx", "rule", "Use httpx, not requests", False),
        ("Don't use npm, use pnpm from now on.", "decision", "Use pnpm, not npm", False),
        # phrasings that were missed
        (
            "I'd rather you use pathlib than os.path.",
            "preference",
            "Use pathlib instead of os.path",
            True,
        ),
        ("I'd rather not use ORMs.", "preference", "Don't use ORMs", True),
        ("Use yarn, not npm.", "preference", "Use yarn, not npm", False),
        (
            "Let's use FastAPI for the new service.",
            "decision",
            "Use FastAPI for the new service",
            False,
        ),
        (
            "Actually, it should be UTC timestamps everywhere, not local time.",
            "correction",
            "Use UTC timestamps everywhere, not local time",
            False,
        ),
        # one rule per instruction: what follows a ";" stays only if it is an instruction too
        (
            "Always use the key K123 only in the maps module; twilio token T456; jwt J789",
            "rule",
            "Use the key K123 only in the maps module",
            False,
        ),
        ("Never push to main; it breaks CI", "rule", "Never push to main", False),
        (
            "I prefer not to use ORMs; write raw SQL.",
            "preference",
            "Don't use ORMs; write raw SQL",
            True,
        ),
    ],
)
def test_lessons_are_restated_not_quoted(prompt, kind, lesson, user_scope):
    assert [(f.kind, f.lesson, f.user_scope) for f in prompt_feedback(prompt)] == [
        (kind, lesson, user_scope)
    ]


@pytest.mark.parametrize(
    "prompt, kind, lesson",
    [
        # phrasings an outside rehearsal planted and the patterns missed: a label before the rule,
        # "from now on" inside it, a rule stated about the project, interjections before "no"
        (
            "ugh, no — tests must never talk to the real Stripe API, not even in test mode.",
            "correction",
            "Tests must never talk to the real Stripe API, not even in test mode",
        ),
        (
            "On routing: we're moving to chi and dropping gorilla/mux for good — gorilla is archived.",
            "decision",
            "Use chi, not gorilla/mux",
        ),
        (
            "Heads-up on style: in this codebase tests are always table-driven with t.Run subtests, one "
            "table per function — no copy-pasted TestXxx funcs for each case.",
            "rule",
            "In this codebase tests are always table-driven with t.Run subtests, one table per function",
        ),
        (
            "Let's settle the id question: order ids are UUIDv7 from now on (uuid.NewV7) — time-sortable.",
            "decision",
            "Order ids are UUIDv7 (uuid.NewV7)",
        ),
        (
            "One rule for every HTTP handler from here on: derive a context with a 3-second timeout "
            "before calling the store.",
            "rule",
            "For every HTTP handler, derive a context with a 3-second timeout before calling the store",
        ),
        (
            "Hard rule in this repo: seed everything with random_state=42 — splits, estimators, CV — I "
            "need runs to be reproducible.",
            "rule",
            "Seed everything with random_state=42",
        ),
        (
            "Ok, decision on the metric: we report and select models on PR-AUC from now on, not ROC-AUC.",
            "decision",
            "Report and select models on PR-AUC, not ROC-AUC",
        ),
        (
            "wait, please don't hand pickles to other teams — their service would unpickle our code.",
            "correction",
            "Don't hand pickles to other teams",
        ),
        (
            "Before you commit: notebooks never go in with outputs — strip them with nbstripout first.",
            "rule",
            "Before you commit, notebooks never go in with outputs — strip them with nbstripout "
            "first",
        ),
        (
            "Never let tests call the real Stripe API; use stripe-mock instead.",
            "rule",
            "Never let tests call the real Stripe API; use stripe-mock instead",
        ),
        (
            "We decided to post deploy notices to #deploys from now on.",
            "decision",
            "Post deploy notices to #deploys",
        ),
        ("Logs must go to stderr, never stdout.", "rule", "Logs must go to stderr, never stdout"),
        (
            "convention: all react components live in src/components/<Name>/index.tsx",
            "rule",
            "All react components live in src/components/<Name>/index.tsx",
        ),
        (
            "remember that all terraform changes have to go through `terraform plan` in CI",
            "rule",
            "All terraform changes have to go through `terraform plan` in CI",
        ),
        (
            "i like f-strings better than .format(), use those when you touch string formatting",
            "preference",
            "Use f-strings instead of .format()",
        ),
        (
            "for CLI output i always want rich tables, not hand-aligned prints",
            "preference",
            "Use rich tables for CLI output, not hand-aligned prints",
        ),
        (
            "ok let's go with option B — cursor-based pagination for all list endpoints.",
            "decision",
            "Go with cursor-based pagination for all list endpoints",
        ),
        (
            "we're standardizing on Kotlin coroutines, no more RxJava in new code",
            "decision",
            "Use Kotlin coroutines, not RxJava",
        ),
        # a URL is one word of the sentence (and what it held is redacted)
        (
            "Don't use the staging database postgres://app:s3cretpw@staging-db:5432/app, use the local "
            "one instead.",
            "correction",
            "Use the local one, not the staging database postgres://app:[REDACTED:url-credentials]"
            "@staging-db:5432/app",
        ),
    ],
)
def test_labels_statements_and_from_now_anywhere(prompt, kind, lesson):
    assert [(f.kind, f.lesson) for f in prompt_feedback(prompt)] == [(kind, lesson)]


@pytest.mark.parametrize(
    "prompt",
    [
        "Next up: a GET /orders/{id} endpoint.",
        "Note: the server is down right now.",
        "Heads-up: I'll be out tomorrow.",
        "Status: tests are failing on main.",
        "The build must have broken when you renamed the module.",
        "Error: the config must contain a port.",
        "FYI: the staging deploy is always slow on Mondays.",
        "Tests must be failing because of the fixture.",
        "Quick question: should errors always be wrapped?",
        "Reminder: the demo is at 3pm.",
        "Plan: add the endpoint, then the tests.",
        "Decision time: which DB should we use?",
        "Our CI is always red on Fridays.",
        "This must be a race condition.",
        "Goal: make the tests pass.",
    ],
)
def test_labels_and_statements_that_hold_no_rule(prompt):
    assert prompt_feedback(prompt) == []


@pytest.mark.parametrize(
    "prompt",
    [
        # ordinary task requests, questions and one-offs stay what they are
        "use the logging module to add a debug line in foo.py",
        "Use the logging module to add a debug line in foo.py.",
        "Let's use the logging module to add a debug line in foo.py",
        "Let's use FastAPI here.",
        "Let's use it.",
        "Could you use yarn, not npm?",
        "Use yarn, not npm, to install the deps in web/ and then run the build script",
        "I'd rather you fix this first.",
        "Actually, it should be faster, not slower.",
        "It should be UTC, not local time.",
        "That must be a typo, not a feature.",
        "Don't use it, use the other one.",
        "Why not use pnpm, not npm?",
        "def f(): use_x, not_y",
        "Use pnpm, not npm for now.",
    ],
)
def test_task_requests_and_questions_are_not_preferences(prompt):
    assert prompt_feedback(prompt) == []


def test_several_lessons_in_one_prompt_and_a_correction_across_sentences():
    found = prompt_feedback(
        "Thanks. I prefer pnpm over npm. Also, from now on we use Postgres 16!\n"
        "- never push to main directly\n- always run the linter first"
    )
    assert [(f.kind, f.lesson) for f in found] == [
        ("preference", "Use pnpm instead of npm"),
        ("decision", "Use Postgres 16"),
        ("rule", "Never push to main directly"),
        ("rule", "Run the linter first"),
    ]
    found = prompt_feedback("That's wrong. Use the v2 endpoint instead.")
    assert [(f.kind, f.lesson) for f in found] == [("correction", "Use the v2 endpoint instead")]
    assert found[0].text == "That's wrong. Use the v2 endpoint instead."
    assert [(f.kind, f.lesson) for f in prompt_feedback("No, that's not what I asked for.")] == [
        ("correction", "")
    ]


@pytest.mark.parametrize(
    "prompt",
    [
        # narration, not rules
        "the test always fails",
        "It always crashes on startup.",
        "I always forget the flag.",
        "We always had problems with this module.",
        "This never happened before.",
        "The build never finishes on CI",
        "I never knew that.",
        "Never mind.",
        "nevermind",
        "You always say that.",
        "it's always the cache",
        # questions
        "should I always run it?",
        "Should we always use pnpm?",
        "Do you prefer tabs?",
        "Why do we never use the ORM?",
        "Can you always run the tests before committing?",
        "what if we always use tabs",
        "Is it better to never push to main",
        # quoted, code, pasted
        'He said "always use tabs".',
        "The docs say 'never push to main directly'.",
        "The rule `always use tabs` is in the linter.",
        "```\nalways run the tests before committing\n```",
        "~~~\nI prefer pnpm over npm\n~~~",
        "    always use tabs",
        "\tnever push to main",
        "> always use tabs\n> never push",
        "2024-05-01 12:00:00 ERROR never retry the job",
        "ERROR: always run make first",
        'Traceback (most recent call last):\n  File "x.py"\nValueError: never use this',
        "$ always-run --tests",
        "npm ERR! never do this",
        "<system-reminder>always use tabs</system-reminder>",
        # hedged, conditional, one-off
        "maybe always use tabs",
        "If you always use tabs, the diff is noisy.",
        "I think we should always use pnpm",
        "for now, don't run the slow tests",
        "don't run the migrations yet",
        "Don't touch the config today.",
        "This time, use the staging database.",
        # empty, trivial or non-instructions
        "don't worry about it",
        "Don't bother.",
        "don't do that",
        "don't change it",
        "I don't know",
        "don't forget",
        "Let's see what happens.",
        "let's try again",
        "Let's look at the logs",
        "no worries",
        "No, I meant the other file.",
        "No problem, thanks!",
        "I prefer it",
        "I prefer this one",
        "I like it",
        "I like that idea",
        "from now on it gets harder",
        "going forward we might need more tests",
        "Great! Can you also show me how?",
        "Great!",
        "ok",
        "thanks",
        "yes",
        "sure, go ahead",
        "Hello Claude! Can you help me understand how Python decorators work?",
        "Let's test a very long message to see how it handles text wrapping.",
        "Run the tests please.",
        "Use tabs.",
        "Fix the failing test in parser.py",
        "Use tabs not spaces",
        "It should use tabs not spaces.",
        "Stop.",
        "Stop the server.",
        "Don't change anything else.",
        "wait, don't delete that file",
        "Don't use it.",
        "Don't run it yet, first show me the diff.",
        "Let's use a dict here.",
        "We'll use a dict here.",
        "We'll use the cache to speed this up.",
        "It's decided.",
        # choices that only make sense in the conversation
        "I prefer the first version.",
        "Let's go with option 2.",
        "We're going with Option B.",
        "Let's stick to the plan.",
        "I'll go with the flow.",
        "Let's go with it.",
        "I always run the tests myself.",
        "I never said that.",
        "I always thought this was weird.",
        "We decided that the cache is optional.",
        "I decided to take a break.",
        "from now on I'll handle the deploys myself.",
        "From now on it's your job.",
        "The function should always return a list.",
        "Note: the API always returns JSON.",
        "Whenever I run it, it crashes.",
        "Each time we deploy, the cache is cleared.",
        "You always forget to close the file.",
        "You never listen.",
        "always",
        "never",
        "This is wrong, the function should be async.",
        "It's wrong to assume that.",
        "I'd prefer if you asked before deleting files.",
        "I like how you did that.",
        "Perfect, but can you also add a test?",
        "Exactly, now do the same for the other module.",
        # confirmations that are not
        "perfect is the enemy of good, keep going",
        "It works on my machine but not in CI",
        "That's not right either",
        "exactly how does this work",
        "correct the typo in README",
        "Looks good but the tests still fail",
        "it doesn't work",
        "that works, except the import",
        # empty inputs
        "",
        "   ",
        None,
        42,
    ],
)
def test_no_false_feedback(prompt):
    assert prompt_feedback(prompt) == []


@pytest.mark.parametrize(
    "prompt, kind, lesson",
    [
        ("We use tabs, not spaces.", "preference", "Use tabs, not spaces"),
        ("This project uses pnpm, not npm.", "preference", "Use pnpm, not npm"),
        ("We use pnpm as our package manager", "preference", "Use pnpm as the package manager"),
        ("We use Vitest.", "preference", "Use Vitest"),
        ("we don't need Python bindings", "decision", "No Python bindings"),
        ("I don't want any new dependencies.", "decision", "No new dependencies"),
        ("We won't support Windows.", "decision", "Don't support Windows"),
        ("We're not going to support IE11", "decision", "Don't support IE11"),
        (
            "Can you please update these tests? We're not doing these complex path selections, "
            "just picking the latest one from the list we got from messages",
            "decision",
            "Don't do these complex path selections, just pick the latest one from the list we "
            "got from messages",
        ),
        (
            "There will be no realtime communication between the local app and the portal.",
            "decision",
            "No realtime communication between the local app and the portal",
        ),
    ],
)
def test_choices_and_constraints_stated_as_facts(prompt, kind, lesson):
    assert [(f.kind, f.lesson) for f in prompt_feedback(prompt)] == [(kind, lesson)]


@pytest.mark.parametrize(
    "prompt",
    [
        "we use it here",
        "We use a lot of memory in this loop.",
        "we don't need that",
        "we don't need to worry",
        "I don't want you to do that",
        "we're not doing that",
        "we're not doing it that way",
        "We're not using it",
        "There will be no tests for this",
        "Do we use pnpm or npm?",
        "There will be no problem.",
    ],
)
def test_things_at_hand_are_no_choices(prompt):
    assert prompt_feedback(prompt) == []


@pytest.mark.parametrize(
    "prompt",
    [
        # another agent's reasoning pasted into a prompt (real-sessions-9, bastion): its
        # "Actually, let me ..." is that agent's next step, not the user's rule
        "Actually, let me check what's in .git/info/exclude to understand the existing rules.",
        "Actually, let me just run the tests to verify they still pass after the changes.",
        "No, let me think about it.",
        # options weighed, not a rule: a later clause after a hypothetical
        "So the correct fix would be to say Bastion instead, and keep the line as it is.",
        "We could add a cache, but keep the old path working.",
    ],
)
def test_the_speakers_own_next_steps_and_weighed_options_are_no_lessons(prompt):
    assert prompt_feedback(prompt) == []


def test_a_lesson_keeps_the_statement_that_elaborates_it():
    found = prompt_feedback(
        "How do we structure the codebases? There will be no realtime communication between "
        "the local app and the portal. All the communication will work through the APIs on the "
        "portal. What do you think?"
    )
    assert [f.lesson for f in found] == [
        "No realtime communication between the local app and the portal"
    ]
    assert found[0].text.endswith("All the communication will work through the APIs on the portal.")


def test_confirmations():
    for prompt in [
        "Perfect!",
        "perfect, that's exactly right",
        "Exactly.",
        "yes that works",
        "That works now, thanks!",
        "LGTM",
        "Looks good to me.",
        "Nice, that fixed it.",
        "Perfect! This should appear without any session divider above it.",
    ]:
        found = prompt_feedback(prompt)
        assert [(f.kind, f.lesson, f.user_scope) for f in found][:1] == [
            ("confirmation", "", False)
        ], prompt


def test_feedback_text_is_redacted_then_capped_and_lessons_are_bounded():
    key = "ghp_" + "A1b2C3d4E5f6" * 3
    found = prompt_feedback(f"always use the token {key} for the CI")
    assert found[0].lesson == "Use the token [REDACTED:github-token] for the CI"
    assert key not in found[0].text and "[REDACTED:github-token]" in found[0].text
    # a lesson is a whole sentence of at most 120 characters: cut at a clause, never mid-way
    # with an ellipsis; one with no clause to cut at is no lesson to store
    long = "always run " + " ".join(f"step{i}" for i in range(200)) + " " + key
    assert prompt_feedback(long) == []
    long = (
        "always run the linter before you push, then the unit tests, then the slow "
        "integration tests against the staging database " + " ".join(["again"] * 30) + key
    )
    found = prompt_feedback(long)
    assert found and len(found[0].lesson) <= 120 and len(found[0].text) <= 300
    assert found[0].lesson == "Run the linter before you push, then the unit tests"
    assert "ghp_" not in found[0].text and "\u2026" not in found[0].lesson
    found = prompt_feedback("never echo password=Tr0ub4dor-x9 in logs")
    assert "Tr0ub4dor" not in found[0].lesson + found[0].text


def test_lessons_are_instructions_not_trigger_phrases():
    prompts = [
        "I prefer pnpm over npm",
        "I always use uv",
        "from now on we use Postgres 16",
        "let's go with the adapter pattern",
        "always run the tests before committing",
        "I'd prefer small functions",
        "we decided to keep the API stable",
    ]
    for f in (f for p in prompts for f in prompt_feedback(p)):
        low = f.lesson.lower()
        assert f.lesson[0].isupper()
        assert not any(
            t in low
            for t in ("i prefer", "i always", "from now on", "let's", "we decided", "always ")
        )


def test_feedback_is_fast():
    prompt = (
        "no, that's wrong \u2014 use tabs not spaces. I prefer pnpm over npm. "
        "Can you refactor the loader so that it reads the config lazily? "
    ) * 10
    prompt_feedback(prompt)
    start = time.perf_counter()
    for _ in range(20):
        prompt_feedback(prompt)
        prompt_check(prompt)
    per_call = (time.perf_counter() - start) / 20 * 1000
    print(f"prompt_feedback + prompt_check: {per_call:.2f} ms for {len(prompt)} chars")
    assert per_call < 100


# ------------------------------------------------------------------------------------------
# prompt_check


@pytest.mark.parametrize(
    "prompt, intent",
    [
        ("Fix the failing import in parser.py", "fix"),
        ("The login page crashes when the email is empty", "fix"),
        ("Add a --json flag to the list command", "build"),
        ("Implement pagination for /users", "build"),
        ("Explain how the cache invalidation works", "explain"),
        ("What does parse() return for empty input?", "explain"),
        ("Refactor the loader into smaller functions", "refactor"),
        ("Rename get_x to fetch_x everywhere", "refactor"),
        ("Write tests for the tokenizer", "test"),
        ("add unit tests for parse", "test"),
        ("Review my changes in the auth module", "review"),
        ("Can you take a look at this PR diff and give feedback on the naming?", "review"),
        ("Is Postgres 16 supported?", "question"),
        ("Thanks, that's all for today", "other"),
    ],
)
def test_intent(prompt, intent):
    assert prompt_check(prompt)["intent"] == intent


@pytest.mark.parametrize(
    "prompt, vague",
    [
        ("make it better", ["make it better", "short prompt"]),
        ("Can you make it better somehow, the code looks off", ["make it better", "somehow"]),
        ("fix it", ["fix it", "short prompt"]),
        ("it doesn't work, please fix it", ["fix it", "doesn't work"]),
        ("Add logging, metrics, etc", ["etc"]),
        ("Do something about the slow page load in the dashboard", ["something"]),
        ("tests", ["short prompt"]),
    ],
)
def test_vague_signals(prompt, vague):
    assert prompt_check(prompt)["vague"] == vague


@pytest.mark.parametrize(
    "prompt",
    [
        "Fix it: TypeError in parser.py line 12 when the input is empty",
        "It doesn't work: `pytest -q` says ModuleNotFoundError: No module named 'proj'",
        "Add a --json flag to the list command that prints one object per line",
        "yes",
        "continue",
        "/clear",
        "commit",
    ],
)
def test_specific_prompts_are_not_vague(prompt):
    assert prompt_check(prompt)["vague"] == []


def test_prompt_check_never_raises():
    for prompt in [None, 42, "", "?" * 10, "```\nfix it\n```", "\x00\xff" * 100]:
        result = prompt_check(prompt)
        assert set(result) == {"intent", "vague"} and isinstance(result["vague"], list)


def test_feedback_dataclass_fields():
    f = prompt_feedback("I prefer pnpm over npm")[0]
    assert isinstance(f, Feedback)
    assert (f.kind, f.lesson, f.text, f.user_scope) == (
        "preference",
        "Use pnpm instead of npm",
        "I prefer pnpm over npm",
        True,
    )
