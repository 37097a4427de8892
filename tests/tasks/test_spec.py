"""Task specs: the examples load, and every problem names its field in one line."""

from __future__ import annotations

import json

import pytest

from lessonloop.errors import UsageError
from lessonloop.tasks.spec import dump, parse, read

from ..conftest import ROOT

EXAMPLES = ROOT / "examples" / "tasks"
MINIMAL = {"name": "t", "prompt": "say hi", "verifier": {"command": "true"}}


@pytest.mark.parametrize(
    "name", ["support-reply.yaml", "sql-top-customers.yaml", "service-config.yaml"]
)
def test_the_examples_are_valid_tasks(name):
    spec, path = read(EXAMPLES / name)
    assert path.is_absolute() and spec.prompt
    assert parse(__import__("yaml").safe_load(dump(spec)), "round trip") == spec


def test_what_each_example_needs():
    support, _ = read(EXAMPLES / "support-reply.yaml")
    sql, _ = read(EXAMPLES / "sql-top-customers.yaml")
    config, _ = read(EXAMPLES / "service-config.yaml")
    assert support.needs_judge and not sql.needs_judge and not config.needs_judge
    assert (sql.extension, config.extension, support.extension) == ("sql", "json", "md")


@pytest.mark.parametrize(
    "change, field, words",
    [
        ({"prompt": ""}, "prompt", "at least 1 character"),
        ({"rubric": [{"name": "x", "weight": 0}]}, "rubric.0.weight", "greater than 0"),
        ({"rubric": [{"name": "x", "colour": "red"}]}, "rubric.0.colour", "unknown field"),
        ({"colour": "red"}, "colour", "unknown field"),
        ({"output_format": "pdf"}, "output_format", "'text', 'markdown', 'json' or 'code'"),
        ({"threshold": 1.5}, "threshold", "less than or equal to 1"),
        ({"max_rounds": 0}, "max_rounds", "greater than or equal to 1"),
        ({"verifier": {"command": "true", "timeout": -1}}, "verifier.timeout", "greater than 0"),
        ({"name": "../etc"}, "name", "letters, digits"),
        (
            {"output_format": "json", "json_schema": {"type": "nonsense"}},
            "json_schema",
            "not a valid JSON Schema",
        ),
    ],
)
def test_a_bad_field_is_named_in_one_line(change, field, words):
    with pytest.raises(UsageError) as caught:
        parse({**MINIMAL, **change}, "task.yaml")
    message = caught.value.message
    assert f"field {field!r}" in message and words in message and "\n" not in message


def test_a_task_must_be_scorable():
    with pytest.raises(UsageError, match="a rubric .* a verifier command, or a json_schema"):
        parse({"name": "t", "prompt": "p"}, "task.yaml")


def test_rubric_may_be_a_list_or_a_dimensions_mapping():
    dims = [{"name": "clarity", "weight": 2, "description": "clear"}]
    assert parse({**MINIMAL, "rubric": dims}, "a") == parse(
        {**MINIMAL, "rubric": {"dimensions": dims}}, "b"
    )


def test_unreadable_files_are_one_line_errors(tmp_path):
    with pytest.raises(UsageError, match="task file not found"):
        read(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    with pytest.raises(UsageError, match="is not valid YAML") as caught:
        read(broken)
    assert "\n" not in caught.value.message
    as_json = tmp_path / "task.json"
    as_json.write_text(json.dumps(MINIMAL))
    assert read(as_json)[0].name == "t"
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("just text\n")
    with pytest.raises(UsageError, match="mapping of fields"):
        read(scalar)


def test_only_regular_files_of_bounded_size_are_read(tmp_path):
    import os
    import time

    started = time.monotonic()
    with pytest.raises(UsageError, match="is not a regular file"):
        read("/dev/zero")
    fifo = tmp_path / "task.fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="is not a regular file"):
        read(fifo)  # opening it must not wait for a writer
    with pytest.raises(UsageError, match="is not a regular file"):
        read(tmp_path)
    with pytest.raises(UsageError, match="no task file given"):
        read("")
    huge = tmp_path / "huge.yaml"
    with open(huge, "wb") as handle:
        handle.truncate(2 << 20)  # sparse: 2 MB of nothing, over the 1 MB limit
    with pytest.raises(UsageError, match="larger than 1 MB"):
        read(huge)
    assert time.monotonic() - started < 5
