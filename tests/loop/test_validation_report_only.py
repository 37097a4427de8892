"""Validation seeds are never used to choose (issue 18, point 3): a strategy's validated score
is a measurement only if nothing the loop proposes or keeps depends on it. Two homes play the
same runs; in one every validation seed scores the mirror image of the other. Every competitor
answer (the proposals), every gate decision and every carried-over start must be identical,
while the validated scores differ."""

from __future__ import annotations

from lessonloop.loop.runner import Runner, create_or_reuse
from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..conftest import FIXTURES

MIRRORED = f"{FIXTURES / 'noisy_scenario.py'}:MirroredValidation"


def _two_runs() -> list[dict]:
    """A first run, then one that carries over its incumbent and playbook: what each proposed
    and kept, and its validated scores."""
    out = []
    for seed, iterations in ((1, 8), (2, 6)):
        with open_store() as store:
            run_id = create_or_reuse(store, MIRRORED, iterations, {"seed": seed})
            Runner(store, run_id).execute()
        with open_store(readonly=True) as store:
            gens = run_store.generations(store, run_id)
            out.append(
                {
                    "proposals": [
                        r["output"]
                        for r in run_store.role_outputs(store, run_id)
                        if r["role"] == "competitor"
                    ],
                    "decisions": [(g["strategy_json"], g["gate_decision"]) for g in gens],
                    "start": {
                        k: v
                        for k, v in (
                            run_store.loads(run_store.get_run(store, run_id)["config_json"])[
                                "start_incumbent"
                            ]
                            or {}
                        ).items()
                        if k != "from_run"
                    },  # run ids are fresh
                    "validated": [g["validated_score"] for g in gens],
                }
            )
    return out


def test_no_validation_score_influences_a_proposal(home, monkeypatch):
    plain = _two_runs()
    monkeypatch.setenv("LESSONLOOP_HOME", str(home / "mirrored"))
    monkeypatch.setenv("LESSONLOOP_TEST_MIRROR", "1")
    mirrored = _two_runs()
    assert plain[1]["start"], "the second run carries over an incumbent"
    for a, b in zip(plain, mirrored):
        assert a["proposals"] and a["proposals"] == b["proposals"]
        assert a["decisions"] == b["decisions"]
        assert a["start"] == b["start"]
        assert a["validated"] != b["validated"], "the validation plays did differ"
