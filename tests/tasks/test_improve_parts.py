"""Pieces of improve and solve: the schema a grammar can enforce, the one-line example, the
budget and its metered providers, and the designer's schema."""

from __future__ import annotations

import pytest

from lessonloop.errors import OffSchemaError
from lessonloop.loop.budget import Budget, BudgetSpent, Metered
from lessonloop.providers.base import Completion, Request
from lessonloop.scenarios.base import schema_problems
from lessonloop.tasks import solve
from lessonloop.tasks.improve import json_example, output_schema, structured
from lessonloop.tasks.spec import parse, read

from ..conftest import ROOT

SERVICE = ROOT / "examples" / "tasks" / "service-config.yaml"


def test_required_keys_allowed_only_by_additional_properties_are_listed():
    schema = {
        "type": "object",
        "required": ["env"],
        "properties": {
            "env": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "required": ["LOG_LEVEL", "REGION"],
            }
        },
    }
    sent = structured(schema)
    assert sent["properties"]["env"]["properties"] == {
        "LOG_LEVEL": {"type": "string"},
        "REGION": {"type": "string"},
    }
    assert "properties" not in schema["properties"]["env"], "the task's schema is not changed"
    for value in (
        {"env": {"LOG_LEVEL": "info", "REGION": "x"}},
        {"env": {"LOG_LEVEL": 1}},
        {"env": {"REGION": "x", "OTHER": 2}},
        {},
    ):
        assert bool(schema_problems(value, schema)) == bool(schema_problems(value, sent)), value
    closed = {"type": "object", "required": ["a"], "additionalProperties": False}
    assert structured(closed) == closed, "nothing is added where no extra key is allowed"


def test_the_one_line_example_names_every_field():
    spec, _ = read(SERVICE)
    line = json_example(output_schema(spec))
    assert "\n" not in line and '"tls": true' in line and '"REGION": <string>' in line
    assert '"replicas": <integer 2..20>' in line
    free = parse(
        {"name": "j", "prompt": "p", "output_format": "json", "rubric": [{"name": "a"}]}, "t"
    )
    assert output_schema(free) == {"type": "object"}
    assert json_example(output_schema(free)) == "{...}"
    text = parse({"name": "t", "prompt": "p", "rubric": [{"name": "a"}]}, "t")
    assert output_schema(text) is None
    listed = parse(
        {"name": "l", "prompt": "p", "output_format": "json", "json_schema": {"type": "array"}}, "t"
    )
    assert output_schema(listed) is None, "structured output answers one object"


class Fixed:
    name = "fake"

    def __init__(self, *completions):
        self.completions = list(completions)

    def complete(self, request):
        item = self.completions.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def request(text="hello") -> Request:
    return Request(role="competitor", system="s", messages=[{"role": "user", "content": text}])


def test_metered_calls_are_recorded_counted_and_stopped_at_the_limit():
    recorded = []
    budget = Budget(max_calls=3, hint=lambda flag: f"raise {flag}")
    off = OffSchemaError(
        "off schema", Completion(text="x", calls=2, input_tokens=4, output_tokens=1)
    )
    metered = Metered(
        Fixed(Completion(text="a", input_tokens=10, output_tokens=5), off), budget, recorded.append
    )
    assert metered.complete(request()).text == "a"
    with pytest.raises(OffSchemaError):
        metered.complete(request())
    assert [c.calls for c in recorded] == [1, 2], "the off-schema answer is on record"
    assert budget.spent == {"calls": 3, "tokens": 20}
    with pytest.raises(
        BudgetSpent, match=r"calls budget spent \(3 of 3 calls\); raise --max-calls"
    ):
        metered.complete(request())
    assert budget.remaining() == {"calls": 0, "tokens": None}


def test_an_endpoint_without_usage_is_estimated_for_a_token_budget():
    budget = Budget(max_tokens=5)
    Metered(Fixed(Completion(text="x" * 40)), budget, lambda c: None).complete(request("y" * 40))
    assert budget.spent["tokens"] >= 20
    with pytest.raises(BudgetSpent, match="tokens budget spent"):
        budget.check()


def test_the_designer_asks_for_its_schema_and_gets_one_repair():
    design = {
        "name": "Polite reply!!",
        "prompt": "Write it.",
        "output_format": "text",
        "language": "",
        "required_concepts": [],
        "rubric": [{"name": "tone", "weight": 1, "description": "polite"}],
    }
    seen = []

    class Designer(Fixed):
        def complete(self, req):
            seen.append(req)
            return super().complete(req)

    import json

    bad = OffSchemaError("off", Completion(text='{"name": "x"}', calls=2))
    counted = []
    spec = solve.design(
        "a polite reply",
        Designer(bad, Completion(text=json.dumps(design))),
        on_call=counted.append,
        timeout=12.0,
    )
    assert spec.name == "Polite reply" and spec.language is None
    assert [r.json_schema for r in seen] == [solve.DESIGN_SCHEMA] * 2
    assert seen[0].timeout == 12.0 and seen[0].max_tokens == solve.DESIGN_MAX_TOKENS
    assert "field 'prompt'" in seen[1].messages[-1]["content"]
    assert [c.calls for c in counted] == [2, 1]
    assert len(seen[0].system) < 200 and "## Answer" in seen[0].messages[0]["content"]
