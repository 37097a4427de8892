"""Context assembly: what a generation derives once is never stale; the offline agent's data
holds the same facts as a model's words."""

from __future__ import annotations

import dataclasses
import json

from lessonloop import canonical, state_block, timeutil
from lessonloop.knowledge.entries import Entry
from lessonloop.loop import prompts
from lessonloop.loop.context import Context, Step, digest, trajectory_line

SCHEMA = {"type": "object", "properties": {"a": {"type": "number", "minimum": 0, "maximum": 1}}}


def _entry(i, kind="bullet", summary="lesson", content="", helpful=0):
    return Entry(
        id=i,
        kind=kind,
        scope="scenario:x",
        summary=f"{summary} {i}",
        content=content,
        why="",
        how_to_apply="",
        tags=[f"param:a{i}"],
        helpful=helpful,
    )


def _step(g, score=0.5, delta=0.01):
    return {
        "generation": g,
        "strategy": {"a": g / 10},
        "compared_to": {"a": 0.0},
        "mean_score": score,
        "mean_delta": delta,
        "gate_decision": "rollback",
    }


def _context(**changes):
    values = dict(
        scenario="x",
        description="rules",
        strategy_schema=SCHEMA,
        generation=4,
        attempt=0,
        incumbent={"strategy": {"a": 0.2}, "score": 0.4},
        trajectory=[_step(1), _step(2), _step(3)],
        last_analysis="it went up",
        playbook=[_entry(1), _entry(2)],
        hints=[_entry(3, "hint")],
        dead_ends=[_entry(4, "dead_end", content='{"a": 0.9}')],
    )
    return Context(**{**values, **changes})


def test_the_state_and_its_record_hold_what_the_words_say():
    ctx = _context()
    state = ctx.state()
    assert state["dead_ends"] == [{"a": 0.9}] and state["incumbent"]["score"] == 0.4
    assert [t["generation"] for t in state["trajectory"]] == [1, 2, 3]
    record = state_block.render(state)
    assert json.loads(record.split("\n", 1)[1].rsplit("\n```", 1)[0]) == json.loads(
        canonical.dumps(state)
    )
    words = prompts.competitor(ctx).user
    assert "lessonloop-state" not in words
    assert "a 0.2 (score 0.4000)" in words and "lesson 1" in words and "a 0.9" in words


def test_attempts_share_what_they_have_in_common_and_nothing_else():
    first = _context()
    retry = first.for_attempt(1, "Attempt 0 was rejected.", [{"strategy": {"a": 0.3}}])
    prompts.competitor(first)
    assert retry.state()["failure"] == "Attempt 0 was rejected."
    assert retry.state()["tried"] == [{"strategy": {"a": 0.3}}]
    assert retry.components["failure_report"] == "Attempt 0 was rejected."
    assert "failure_report" not in first.components
    assert prompts.competitor(retry) == prompts.competitor(
        dataclasses.replace(
            first,
            attempt=1,
            failure_report="Attempt 0 was rejected.",
            tried=[{"strategy": {"a": 0.3}}],
        )
    )


def test_a_context_with_other_knowledge_never_sees_the_old_derivations():
    old = _context()
    prompts.competitor(old), prompts.coach(old, {"decision": "rollback"}, "analysis")
    changed = dataclasses.replace(
        old, playbook=[_entry(1, helpful=5)], trajectory=old.trajectory + [_step(4, 0.9)]
    )
    assert "+5/-0" in changed.components["playbook"]
    assert changed.playbook_state()[0]["helpful"] == 5
    assert changed.trajectory_state()[-1]["mean_score"] == 0.9
    assert "gen 4: score 0.9000" in changed.components["trajectory"]
    assert "+5/-0" in prompts.coach(changed, {"decision": "rollback"}, "analysis").user


def test_a_step_cannot_be_changed_afterwards():
    values = _step(7)
    step = Step(values)
    values["strategy"]["a"] = 0.99  # the caller's dict changes; the step does not
    step["strategy"]["a"] = 0.98  # what a step hands out is a copy
    assert step["strategy"] == {"a": 0.7} and dict(step)["strategy"] == {"a": 0.7}
    assert canonical.dumps(dict(step)) == canonical.dumps(_step(7))
    assert step.scores() == {
        "generation": 7,
        "mean_score": 0.5,
        "mean_delta": 0.01,
        "gate_decision": "rollback",
    }
    assert trajectory_line(step).endswith("rollback: a 0.7")
    assert trajectory_line(
        Step(
            {
                "generation": 1,
                "mean_score": 0.0,
                "mean_delta": None,
                "gate_decision": "rollback",
                "strategy": None,
            }
        )
    ).endswith("rollback: null"), "a generation that played nothing"


def test_digests_are_keyed_on_the_text():
    assert digest("a") != digest("b") and digest("a") == digest("a")
    manifest = _context(description="other rules").manifest()
    rules = next(c for c in manifest["components"] if c["name"] == "rules")
    assert rules["sha256"] == digest("other rules")


def test_utc_now_formats_each_second_it_is_called_in(monkeypatch):
    clock = iter([1_700_000_000.25, 1_700_000_000.75, 1_700_000_001.5, 1_600_000_000.0])
    monkeypatch.setattr(timeutil.time, "time", lambda: next(clock))
    assert [timeutil.utc_now() for _ in range(4)] == [
        "2023-11-14T22:13:20.250Z",
        "2023-11-14T22:13:20.750Z",
        "2023-11-14T22:13:21.500Z",
        "2020-09-13T12:26:40.000Z",
    ]
