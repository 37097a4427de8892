"""The judge: tolerant verdict parsing, samples and disagreement, epochs and the cache, and the
cheap checks that score 0 before any judge call."""

from __future__ import annotations

import pytest

from lessonloop.config import Route
from lessonloop.providers.base import Completion
from lessonloop.store import open_store
from lessonloop.tasks.evaluate import evaluate, extract
from lessonloop.tasks.judge import Judge, JudgeFailed, epoch, parse
from lessonloop.tasks.spec import parse as parse_spec

SPEC = parse_spec(
    {
        "name": "reply",
        "prompt": "Write a reply.",
        "required_strings": ["A-1"],
        "rubric": [
            {"name": "empathy", "weight": 1, "description": "kind"},
            {"name": "accuracy", "weight": 3, "description": "right"},
        ],
        "judge_samples": 1,
    },
    "test",
)
ROUTE = Route("scripted:x")


class Answers:
    """A provider that answers from a list and counts its calls."""

    name = "scripted"

    def __init__(self, *texts: str):
        self.texts, self.calls = list(texts), 0

    def complete(self, request):
        self.calls += 1
        assert request.role == "judge"
        return Completion(text=self.texts.pop(0), cost=0.0)


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            'Fine.\n<<<VERDICT\n{"dimensions": {"empathy": 0.5, "accuracy": 1.0}, "reasoning": "ok"}\n'
            "VERDICT>>>",
            {"empathy": 0.5, "accuracy": 1.0},
        ),
        (
            '```json\n{"dimensions": {"Empathy": 8, "Accuracy": 6}}\n```',
            {"empathy": 0.8, "accuracy": 0.6},
        ),
        ("Empathy: 7/10\nAccuracy - 9/10\n", {"empathy": 0.7, "accuracy": 0.9}),
        ('{"score": 0.4, "reasoning": "meh"}', {"empathy": 0.4, "accuracy": 0.4}),
    ],
)
def test_verdicts_are_read_from_markers_json_or_plain_lines(text, expected):
    dimensions, _ = parse(text, SPEC)
    assert dimensions == pytest.approx(expected)


@pytest.mark.parametrize(
    "text",
    [
        "I liked it.",
        '{"dimensions": {"empathy": 0.9}}',
        '{"dimensions": {"empathy": 2000, "accuracy": 1}}',
    ],
)
def test_an_unreadable_or_incomplete_verdict_fails(text):
    with pytest.raises(JudgeFailed):
        parse(text, SPEC)


def test_samples_are_averaged_weighted_and_disagreement_flagged(home):
    spec = SPEC.model_copy(update={"judge_samples": 2})
    provider = Answers(
        '{"dimensions": {"empathy": 1, "accuracy": 1}}',
        '{"dimensions": {"empathy": 0, "accuracy": 0.2}}',
    )
    with open_store() as store:
        verdict = Judge(spec, provider, ROUTE, store)("Dear customer, A-1 ...")
    assert verdict.dimensions == pytest.approx({"empathy": 0.5, "accuracy": 0.6})
    assert verdict.score == pytest.approx((0.5 * 1 + 0.6 * 3) / 4)
    assert verdict.disagreement and verdict.samples == 2


def test_verdicts_are_cached_per_epoch_and_output(home):
    answer = '{"dimensions": {"empathy": 0.9, "accuracy": 0.9}}'
    provider = Answers(answer, answer)
    with open_store() as store:
        judge = Judge(SPEC, provider, ROUTE, store)
        first, again = judge("A-1 hello"), judge("A-1 hello")
        assert provider.calls == 1 and again.cached and again.score == first.score
        other_model = Judge(SPEC, provider, Route("openai", "gpt-x", "http://localhost"), store)
        assert other_model.epoch != judge.epoch
        other_model("A-1 hello")
        assert provider.calls == 2, "another epoch is another scale: judged again"


def test_missing_required_strings_score_zero_before_any_judge_call(home):
    provider = Answers()
    with open_store() as store:
        result = evaluate(
            SPEC,
            "Dear customer, sorry.\n",
            home,
            Judge(SPEC, provider, ROUTE, store),
            epoch(SPEC, ROUTE),
        )
    assert result.score == 0 and provider.calls == 0
    assert "missing required strings: A-1" in result.reasoning


def test_an_unusable_verdict_is_a_judge_failure_not_a_crash(home):
    with open_store() as store:
        result = evaluate(
            SPEC, "A-1 fine\n", home, Judge(SPEC, Answers("no idea"), ROUTE, store), "e"
        )
    assert result.judge_failed and result.score == 0


def test_outputs_are_extracted_per_format():
    json_spec = parse_spec(
        {"name": "c", "prompt": "p", "output_format": "json", "json_schema": {"type": "object"}},
        "t",
    )
    code_spec = parse_spec(
        {
            "name": "q",
            "prompt": "p",
            "output_format": "code",
            "language": "sql",
            "verifier": {"command": "true"},
        },
        "t",
    )
    assert extract('Here:\n```json\n{"a": 1}\n```', json_spec) == '{\n  "a": 1\n}\n'
    assert (
        extract("Try:\n```python\nx=1\n```\nor\n```sql\nSELECT 1;\n```", code_spec) == "SELECT 1;\n"
    )
    assert extract("```\nplain\n```", SPEC) == "plain\n"
    assert extract("no json here", json_spec) == ""


@pytest.mark.parametrize(
    "text",
    [
        '"},"',  # not a verdict at all
        '{"reasoning": "\\"},\\"", "dimensions": {"empathy": 0, "accuracy": 0}}',  # no words
        '{"dimensions": {"empathy": 0, "accuracy": 0}}',  # all 0, no reason
        '{"reasoning": "ok", "dimensions": {"empathy": "high", "accuracy": 1}}',  # not a number
        '{"reasoning": "ok", "dimensions": {"empathy": true, "accuracy": 1}}',
        '{"reasoning": "ok", "score": true}',
        '{"reasoning": "ok", "dimensions": {"accuracy": 1}}',  # a dimension missing
    ],
)
def test_a_verdict_without_a_usable_score_is_a_failure_saying_why(text):
    with pytest.raises(JudgeFailed, match="the judge gave no usable verdict"):
        parse(text, SPEC)


def test_zero_scores_with_a_reason_are_a_verdict():
    dims, reasoning = parse(
        '{"reasoning": "Off topic.", "dimensions": {"empathy": 0, "accuracy": 0}}', SPEC
    )
    assert dims == {"empathy": 0, "accuracy": 0} and reasoning == "Off topic."


def test_the_structured_answer_is_read_first():
    dims, _ = parse(
        "", SPEC, parsed={"reasoning": "Good.", "dimensions": {"empathy": 1, "accuracy": 0.5}}
    )
    assert dims == {"empathy": 1, "accuracy": 0.5}


def test_the_judge_prompt_is_short_and_asks_for_structured_output(home):
    from lessonloop.tasks.judge import prompt, verdict_schema

    system, user = prompt(SPEC, "A-1 hello")
    assert len(system) < 300 and "## Answer" in user and '"empathy": <0 to 1>' in user
    assert "properties" not in user, "the schema goes through structured output"
    schema = verdict_schema(SPEC)
    assert list(schema["properties"]) == ["reasoning", "dimensions"]
    seen = []

    class Recording(Answers):
        def complete(self, request):
            seen.append(request)
            return super().complete(request)

    with open_store() as store:
        Judge(
            SPEC,
            Recording('{"reasoning": "Fine.", "dimensions": {"empathy": 1, "accuracy": 1}}'),
            ROUTE,
            store,
        )("A-1")
    assert seen[0].json_schema == schema and seen[0].timeout is None
    assert seen[0].max_tokens <= 400


def test_an_off_schema_verdict_is_counted_then_a_judge_failure(home):
    from lessonloop.errors import OffSchemaError

    class OffSchema:
        name = "openai"

        def complete(self, request):
            raise OffSchemaError(
                "did not answer JSON matching the schema",
                Completion(text='"},"', calls=2, input_tokens=5),
            )

    counted = []
    with open_store() as store:
        judge = Judge(SPEC, OffSchema(), ROUTE, store, on_call=counted.append)
        with pytest.raises(JudgeFailed, match="no usable verdict"):
            judge("A-1")
        result = evaluate(SPEC, "A-1 fine\n", home, judge, "e")
    assert [c.calls for c in counted] == [2, 2]
    assert result.judge_failed and "no usable verdict" in result.reasoning
