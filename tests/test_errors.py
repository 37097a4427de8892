"""An error names the argument at fault once, by its use-case name; each adapter says it its
own way (the CLI as a flag, the MCP server as a tool argument): no adapter rewrites text."""

import pytest

from lessonloop.cli.output import error_text
from lessonloop.errors import UsageError
from lessonloop.loop.runner import RunOptions, check_iterations
from lessonloop.loop.scoring import parse_seeds


def test_a_field_error_reads_plainly_and_names_its_field_as_each_adapter_asks():
    error = UsageError("must be between 1 and 1000", field="match_timeout")
    assert str(error) == error.message == "match_timeout must be between 1 and 1000"
    assert error.named(lambda field: field.upper()) == "MATCH_TIMEOUT must be between 1 and 1000"
    assert error_text(error) == "--match-timeout must be between 1 and 1000"
    # the field may stand inside the sentence
    error = UsageError(
        "run r1 already has 5 generations; {field} cannot be lower", field="iterations"
    )
    assert error_text(error) == "run r1 already has 5 generations; --iterations cannot be lower"
    # without a field the message is left as it is, braces included
    assert error_text(UsageError("a {field} in plain text")) == "a {field} in plain text"


@pytest.mark.parametrize(
    "check, field",
    [
        (lambda: RunOptions(matches=0).check(), "matches"),
        (lambda: RunOptions(match_timeout=0).check(), "match_timeout"),
        (lambda: RunOptions(max_calls=0).check(), "max_calls"),
        (lambda: RunOptions(seed=-1).check(), "seed"),
        (lambda: check_iterations(0), "iterations"),
        (lambda: parse_seeds("9..1"), "seeds"),
    ],
)
def test_the_engine_names_the_field_not_a_flag(check, field):
    with pytest.raises(UsageError) as caught:
        check()
    assert caught.value.field == field
    assert "--" not in str(caught.value) and str(caught.value).startswith(field)
    assert error_text(caught.value).startswith("--" + field.replace("_", "-") + " ")
