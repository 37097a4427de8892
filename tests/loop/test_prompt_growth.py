"""Costs that do not grow with the run (issue 20, point 5): a model's words are trimmed to the
context budget, and what a call's record keeps of the offline agent's data (the analyst's
trajectory, the competitor's history) is a bounded summary of the run, not all of it; the facts
that matter (latest results, the best strategy, recent gate decisions) stay.
bench/prompt_growth.py prints the sizes of a 300-generation run."""

from __future__ import annotations

import json
import sqlite3

from lessonloop import state_block
from lessonloop.loop import prompts
from lessonloop.loop.context import TOKEN_BUDGET, Context
from lessonloop.loop.runner import SearchContext

SCHEMA = {
    "type": "object",
    "properties": {
        "aim": {"type": "number", "minimum": 0, "maximum": 1},
        "draw": {"type": "number", "minimum": 0, "maximum": 1},
    },
}


def _strategy(g: int) -> dict:
    return {"aim": round((g * 37 % 100) / 100, 4), "draw": round((g * 53 % 100) / 100, 4)}


def _step(g: int) -> dict:
    return {
        "generation": g,
        "strategy": _strategy(g),
        "compared_to": _strategy(g // 7),
        "mean_score": round(0.4 + (g % 13) / 100, 4),
        "mean_delta": round(((g % 5) - 2) / 100, 4),
        "gate_decision": "advance" if g % 3 == 0 else "rollback",
    }


def _context(generation: int, cls=Context, **extra) -> Context:
    return cls(
        scenario="grid_ctf",
        description="Capture the flag on a grid.",
        strategy_schema=SCHEMA,
        generation=generation,
        attempt=0,
        incumbent={"strategy": {"aim": 0.61, "draw": 0.42}, "score": 0.6123},
        trajectory=[_step(g) for g in range(1, generation)],
        **extra,
    )


def _outcome(generation: int) -> dict:
    return {
        "decision": "rollback",
        "rationale": "lost 3 of 5 pairs",
        "incumbent": {"aim": 0.61, "draw": 0.42},
        "incumbent_score": 0.6123,
        "challenger": _strategy(generation),
        "challenger_score": 0.5871,
        "challenger_dimensions": {"captures": 0.4},
        "incumbent_dimensions": {"captures": 0.5},
    }


def _stored(prompt: prompts.Prompt) -> str:
    """The prompt as the runner stores an offline call: the words, then the record of its data."""
    return f"{prompt.system}\n\n{prompt.user}\n\n{state_block.render(prompt.state)}"


def _record(stored: str) -> dict:
    return json.loads(stored.split("```json lessonloop-state\n", 1)[1].rsplit("\n```", 1)[0])


def test_the_analyst_prompt_at_generation_300_is_no_larger_than_at_30():
    at_30 = prompts.analyst(_context(30), _outcome(30))
    at_300 = prompts.analyst(_context(300), _outcome(300))
    assert len(_stored(at_300)) <= 1.05 * len(_stored(at_30))
    assert len(_stored(at_300)) <= 4 * TOKEN_BUDGET  # about four characters a token
    # a summary, not the whole run: the latest generations and how many came before
    record = _record(_stored(at_300))
    steps = record["trajectory"]
    assert len(steps) == state_block.RECORDED_ITEMS and steps[-1]["generation"] == 299
    assert record["trajectory_omitted"] == 299 - state_block.RECORDED_ITEMS
    assert record["outcome"] == _outcome(300)
    assert "gen 299: score" in at_300.user and "gen 296: score" in at_300.user  # latest results
    assert "Current best (score 0.6123): aim 0.61, draw 0.42" in at_300.user  # the best strategy
    assert "Gate: rollback (lost 3 of 5 pairs)" in at_300.user  # this generation's decision
    assert "gate advance" in at_300.user and "gate rollback" in at_300.user  # recent decisions


def test_a_run_shorter_than_the_bound_is_recorded_whole():
    record = _record(_stored(prompts.analyst(_context(20), _outcome(20))))
    assert [s["generation"] for s in record["trajectory"]] == list(range(1, 20))
    assert "trajectory_omitted" not in record


def test_the_record_of_a_long_history_keeps_its_newest_entries_and_counts_the_rest():
    def history(n: int) -> list[dict]:
        return [
            {"strategy": _strategy(i), "mean_delta": -0.01, "decision": "rollback"}
            for i in range(n)
        ]

    short = _stored(prompts.competitor(_context(30, SearchContext, history=history(360))))
    long = _stored(prompts.competitor(_context(30, SearchContext, history=history(3600))))
    assert len(long) <= len(short) + 10  # the count of the omitted ones is one number
    block = _record(long)
    assert block["history_omitted"] == 3600 - state_block.RECORDED_ITEMS
    assert block["history"] == history(3600)[-state_block.RECORDED_ITEMS :]
    assert len(block["trajectory"]) == 29 and "trajectory_omitted" not in block


def test_a_ranked_list_keeps_its_first_entries_in_the_record():
    playbook = [{"id": i, "summary": f"lesson {i}"} for i in range(50)]
    text = state_block.render({"role": "coach", "playbook": playbook})
    block = json.loads(text.split("\n", 1)[1].rsplit("\n```", 1)[0])
    assert block["playbook"] == playbook[: state_block.RECORDED_ITEMS]
    assert block["playbook_omitted"] == 50 - state_block.RECORDED_ITEMS


def test_stored_prompts_stay_flat_in_a_real_run(cli, home):
    """An offline run: the competitor's record no longer grows with every strategy measured,
    and every role's words stay within the context budget."""
    assert cli("run", "grid_ctf", "--iterations", 12, "--run-id", "flat").code == 0
    conn = sqlite3.connect(home / "lessonloop.db")
    rows = conn.execute(
        "SELECT generation_index, role, prompt FROM role_outputs WHERE run_id = 'flat'"
    ).fetchall()
    conn.close()

    def largest(role: str, generations: range) -> int:
        return max(len(p) for g, r, p in rows if r == role and g in generations)

    assert largest("competitor", range(10, 13)) <= 1.2 * largest("competitor", range(4, 7))
    assert any("history_omitted" in p for g, r, p in rows if r == "competitor" and g == 12)
    for _, role, prompt in rows:
        words = prompt.split("\n\n```json lessonloop-state\n", 1)[0]
        assert len(words) <= 4 * TOKEN_BUDGET, role
