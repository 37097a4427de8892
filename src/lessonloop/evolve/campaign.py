"""An evolve run: the baseline, then a candidate per generation (receipt first, correctness in
the sandbox, timing pairs against the champion), the champion's confirmation against the
baseline, and the artifacts. Everything is stored as it happens, so a killed run resumes from
its stored candidates: a finished candidate is never checked or timed again."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..canonical import dumps
from ..errors import LessonloopError, Stopped, UsageError
from . import harness, lessons, measure, proposer, writer
from . import params as declared
from . import store as rows
from .spec import Benchmark, Loaded, digest

if TYPE_CHECKING:
    from ..loop.budget import Metered
    from ..providers.base import Provider
    from ..store.db import Store

CONFIRM_FACTOR = 2  # the confirmation measures this many times the first look's pairs


@dataclass
class Route:
    """A model route writing the candidates (instead of the offline tuner), and its call
    budget (None: one call a generation, bounded by the generations)."""

    provider: Provider
    max_calls: int | None = None


class Campaign:
    """One run's state: its spec, its folder, its stored candidates."""

    def __init__(
        self,
        loaded: Loaded,
        store: Store,
        run_id: str,
        folder: Path,
        seed: int,
        route: Route | None = None,
    ):
        self.loaded = loaded
        self.store = store
        self.run_id = run_id
        self.folder = folder
        self.seed = seed
        self.bench = loaded.spec.benchmark
        self.exact = self.bench.metric == "instructions"  # counts: the worst-pair rule
        self.seeds = lessons.seeds(store, loaded)
        self.metered: Metered | None = None
        self.writing = 0  # the candidate a model call is for
        self.budget_spent = False
        if route is not None:  # a model writes the candidates; its calls so far are stored
            from ..loop.budget import Budget, Metered
            from ..store.runs import record_call

            spent = store.query_one(
                "SELECT COUNT(*) AS n FROM provider_calls WHERE run_id = ? AND role = 'competitor'",
                (run_id,),
            )
            budget = Budget(
                route.max_calls,
                spent={"calls": spent["n"] if spent else 0},
                hint=lambda flag: f"continue with --run-id {run_id} and a larger {flag}",
            )
            name = route.provider.name
            # each answered call goes on the usage ledger at once, under its candidate
            self.metered = Metered(
                route.provider,
                budget,
                record=lambda completion: record_call(
                    store, run_id, self.writing, 0, "competitor", name, completion
                ),
            )

    # -- candidates and receipts --------------------------------------------------------------

    def candidates(self) -> list[dict]:
        return rows.candidates(self.store, self.run_id)

    def receive(
        self,
        index: int,
        values: dict,
        source: str | None = None,
        suffix: str | None = None,
        rejected: str | None = None,
    ) -> None:
        """Write the candidate's source (``values`` substituted in the baseline's, or the
        ``source`` a model wrote) and store its receipt, before anything runs it; ``rejected``:
        a model's answer without usable source, stored with the reason."""
        if source is None:
            python = self.loaded.suffix == ".py"
            source = declared.substitute(self.loaded.source, self.loaded.params, values, python)
        path = self.folder / "candidates" / f"{index}{suffix or self.loaded.suffix}"
        from ..files import atomic_write

        atomic_write(path, source)
        rows.add_receipt(
            self.store,
            self.run_id,
            index,
            values,
            digest(source),
            self.loaded.spec_digest,
            str(path),
            rejected,
        )

    def source_of(self, candidate: dict) -> str:
        """The candidate's source, if it still matches its receipt; else a refusal."""
        try:
            text = Path(candidate["source_path"]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _Refused(f"its source cannot be read ({exc})") from None
        if digest(text) != candidate["source_digest"]:
            raise _Refused("candidate source changed after its receipt was stored")
        if candidate["spec_digest"] != self.loaded.spec_digest:
            raise _Refused("the spec changed after its receipt was stored")
        return text

    def champion_source(self, champion: dict) -> str:
        """The champion's source; a changed one stops the run (its candidates are not to
        blame, and nothing can be measured against it)."""
        try:
            return self.source_of(champion)
        except _Refused as refused:
            raise LessonloopError(
                f"the champion (generation {champion['candidate_index']}, "
                f"{champion['source_path']}) was refused: {refused}; put it back as it was, or "
                "start a new run"
            ) from None

    # -- one candidate ------------------------------------------------------------------------

    def evaluate_baseline(self, baseline: dict) -> None:
        source = self.source_of(baseline)
        checked = harness.check(self.loaded, source)
        if not checked.ok:
            rows.finish(
                self.store, self.run_id, 0, status="incorrect", correct=False,
                message=checked.message,
            )  # fmt: skip
            raise LessonloopError(
                f"the baseline source is not correct ({checked.message}): fix it or the spec"
            )
        rows.finish(
            self.store, self.run_id, 0, status="baseline", correct=True, message=checked.message,
            log_gain=0.0, champion=True,
        )  # fmt: skip

    def evaluate(self, candidate: dict, champion: dict) -> None:
        index = candidate["candidate_index"]
        champion_source = self.champion_source(champion)
        try:
            source = self.source_of(candidate)
        except _Refused as refused:
            rows.finish(
                self.store, self.run_id, index, status="refused", correct=None,
                message=str(refused),
            )  # fmt: skip
            return
        checked = harness.check(self.loaded, source)
        if not checked.ok:
            rows.finish(
                self.store, self.run_id, index, status="incorrect", correct=False,
                message=checked.message,
            )  # fmt: skip
            return
        try:
            comparison = measure.decide(
                lambda count: harness.time_pairs(self.loaded, champion_source, source, count),
                self.bench.pairs,
                self.bench.max_pairs,
                self.bench.min_log_gain,
                self.bench.direction,
                self.exact,
            )
        except harness.SandboxFailed as exc:
            rows.finish(
                self.store, self.run_id, index, status="crashed", correct=True,
                message=f"crashed while timed: {exc}",
            )  # fmt: skip
            return
        won = comparison.faster
        rows.finish(
            self.store,
            self.run_id,
            index,
            status="champion" if won else "not faster",
            correct=True,
            message=checked.message,
            against=champion["candidate_index"],
            speedup=comparison.first.speedup,
            bound=comparison.first.speedup_bound,
            log_gain=(champion["log_gain_vs_baseline"] or 0.0) + comparison.first.result.mean_delta,
            champion=won,
            stats={**comparison.to_dict(), "metric": self.bench.metric},
            pairs=comparison.pairs,
        )

    # -- the run ------------------------------------------------------------------------------

    def champion(self, found: list[dict]) -> dict:
        return [c for c in found if c["champion"]][-1]

    def history(self, found: list[dict]) -> list[tuple[dict, float]]:
        """What the proposer is told: each finished candidate's log speed-up over the
        baseline, ``proposer.WRONG`` for one that was incorrect, crashed or refused."""
        told = []
        for c in found:
            if c["status"] == "received" or "written_by" in c["params"]:
                continue
            gain = c["log_gain_vs_baseline"]
            told.append((c["params"], proposer.WRONG if gain is None else gain))
        return told

    def step(self, on_generation: Callable[[dict], None]) -> str | None:
        """Finish the unfinished candidate or propose and evaluate a new one; the reason to
        stop when there is nothing left to propose (or no call left to spend)."""
        found = self.candidates()
        last = found[-1]
        if last["status"] != "received":
            if self.metered is not None:
                return self.write(found, on_generation)
            tried = {dumps(c["params"]) for c in found}
            # an earlier run's champion first (its lesson), then the tuner's proposals
            seeded = [s for s in self.seeds if dumps(s) not in tried]
            values = seeded[0] if seeded else None
            if values is None:
                values = proposer.propose(
                    self.loaded.params, self.history(found), self.seed, len(found)
                )
            if values is None:
                return "every value of the declared parameters was tried"
            self.receive(len(found), values)
            found = self.candidates()
            last = found[-1]
        champion = self.champion(found[:-1])
        self.evaluate(last, champion)
        finished = self.candidates()[-1]
        on_generation(generation_event(finished, champion, self.bench))
        return None

    def write(self, found: list[dict], on_generation: Callable[[dict], None]) -> str | None:
        """A model-written candidate: one call, its answer stored with the receipt before
        anything runs it; an unusable answer is a rejected candidate with the reason."""
        from ..loop.budget import BudgetSpent

        assert self.metered is not None
        index = self.writing = len(found)
        champion = self.champion(found)
        champion_source = self.champion_source(champion)
        try:
            written = writer.write(
                self.metered, self.loaded, champion_source, champion["candidate_index"],
                found[1:], lessons.shown(self.store, self.loaded), index,
            )  # fmt: skip
        except BudgetSpent as exc:
            self.budget_spent = True  # the run is stopped, not done: a larger budget continues
            return str(exc)
        values = {"written_by": self.metered.name}
        from ..files import atomic_write

        atomic_write(self.folder / "candidates" / f"{index}.answer.md", written.answer)
        if written.source is None:
            self.receive(
                index, values, written.answer, suffix=".answer.md", rejected=written.reason
            )
        else:
            self.receive(index, values, written.source)
            self.evaluate(self.candidates()[-1], champion)
        on_generation(generation_event(self.candidates()[-1], champion, self.bench))
        return None

    def confirm(self) -> measure.Comparison | None:
        """The champion against the baseline on fresh pairs (stored, measured once)."""
        found = self.candidates()
        champion = self.champion(found)
        if champion["candidate_index"] == 0:
            return None
        index = champion["candidate_index"]
        stored = rows.pairs(self.store, self.run_id, index, "confirm")
        if not stored:
            baseline_source = self.source_of(found[0])
            source = self.source_of(champion)
            try:
                stored = harness.time_pairs(
                    self.loaded, baseline_source, source, CONFIRM_FACTOR * self.bench.pairs
                )
            except harness.SandboxFailed as exc:
                raise LessonloopError(
                    f"the champion's confirmation against the baseline failed: {exc}"
                ) from None
            rows.save_confirmation(self.store, self.run_id, index, stored)
        return measure.assess(
            stored, self.bench.min_log_gain, direction=self.bench.direction, exact=self.exact
        )


class _Refused(LessonloopError):
    """A candidate's stored source no longer matches its receipt (caught where a candidate is
    refused; where the champion or baseline is, the run stops on it, in one line)."""


def generation_event(candidate: dict, champion: dict, bench: Benchmark) -> dict:
    """What is shown per generation: params, correct?, the gain with its bound, champion?"""
    return {
        **rows.shown(candidate),
        "against": champion["candidate_index"],
        "metric": bench.metric,
        "direction": bench.direction,
    }


def run(
    loaded: Loaded,
    store: Store,
    run_id: str,
    folder: Path,
    seed: int | None,
    generations: int | None,
    on_generation: Callable[[dict], None] = lambda event: None,
    route: Route | None = None,
) -> dict:
    """Start or continue the run ``run_id``; returns its summary (and writes its artifacts).
    ``seed`` None: 0 for a new run, its own for one continued (another is refused)."""
    existing = rows.run_row(store, run_id)
    if existing is None:
        if rows.is_scenario_run(store, run_id):
            raise UsageError(f"run id {run_id!r} is taken by another kind of run", field="run_id")
        target = generations or loaded.spec.budget.generations
        seed = seed or 0
        rows.create_run(
            store, run_id, loaded.spec.name, str(loaded.path), loaded.spec_digest,
            loaded.source_digest, seed, target,
            route.provider.name if route is not None else "local",
        )  # fmt: skip
    else:
        if existing["spec_digest"] != loaded.spec_digest:
            raise UsageError(
                f"run {run_id} was started from a different spec (its digest changed): "
                "start a new run for the new spec"
            )
        if existing["source_digest"] != loaded.source_digest:
            raise UsageError(
                f"run {run_id}'s source file changed since it started: start a new run"
            )
        if seed is not None and seed != existing["seed"]:
            raise UsageError(
                f"run {run_id} was started with --seed {existing['seed']}: leave --seed out to "
                "continue it, or start a new run"
            )
        seed = existing["seed"]
        target = generations or existing["target_generations"]
    rows.update_run(store, run_id, "running", None, target)
    campaign = Campaign(loaded, store, run_id, folder, seed, route)
    before = len(campaign.candidates())
    try:
        found = campaign.candidates()
        if not found:
            campaign.receive(0, declared.defaults(loaded.params))
            found = campaign.candidates()
        if found[0]["status"] == "received":
            try:
                campaign.evaluate_baseline(found[0])
            except _Refused as refused:
                raise LessonloopError(f"the baseline was refused: {refused}") from None
        elif found[0]["status"] != "baseline":
            raise LessonloopError(f"the baseline source is not correct ({found[0]['message']})")
        stop = f"{target} generations done"
        while (
            len(campaign.candidates()) - 1 < target
            or campaign.candidates()[-1]["status"] == "received"
        ):
            ended = campaign.step(on_generation)
            if ended is not None:
                stop = ended
                break
        confirmation = campaign.confirm()
    except KeyboardInterrupt:
        rows.update_run(store, run_id, "stopped", "interrupted")
        raise Stopped(
            f"run {run_id} interrupted; continue it with the same command and --run-id {run_id}"
        ) from None
    except LessonloopError as exc:
        rows.update_run(store, run_id, "failed", str(exc))
        raise
    rows.update_run(store, run_id, "stopped" if campaign.budget_spent else "completed", stop)
    summary = summarize(campaign, confirmation, stop)
    # what made it better and its dead ends, through admission (scope evolve:<name>)
    # (once: a finished run asked again, with nothing new to try, teaches nothing new)
    found = campaign.candidates()
    learned = existing is None or existing["status"] != "completed" or len(found) != before
    summary["lessons"] = [
        {"action": o.action, "entry_id": o.entry_id}
        for o in (lessons.learn(store, loaded, summary, found) if learned else [])
    ]
    write_artifacts(campaign, summary)
    return summary


def summarize(campaign: Campaign, confirmation: measure.Comparison | None, stop: str) -> dict:
    found = campaign.candidates()
    champion = campaign.champion(found)
    folder = campaign.folder
    return {
        "run_id": campaign.run_id,
        "status": "stopped" if campaign.budget_spent else "completed",
        "stop_reason": stop,
        "generations": len(found) - 1,
        # what the speed-up figures are ratios of: champion/candidate for a cost (wall time,
        # instructions), candidate/champion when higher is better
        "metric": {"name": campaign.bench.metric, "direction": campaign.bench.direction},
        "baseline": {"params": found[0]["params"]},
        "champion": {
            "generation": champion["candidate_index"],
            "params": champion["params"],
            "speedup_vs_baseline": confirmation.speedup if confirmation else 1.0,
            "speedup_lower_bound": confirmation.speedup_bound if confirmation else None,
            # the confirmation's own verdict: faster than the baseline at the stated confidence
            "confirmed": confirmation.faster if confirmation else None,
            "confirmation": confirmation.to_dict() if confirmation else None,
        },
        "candidates": [
            rows.shown(c, rows.pairs(campaign.store, campaign.run_id, c["candidate_index"], "gate"))
            for c in found
        ],
        "artifacts": {
            "champion_source": str(folder / f"champion{campaign.loaded.suffix}"),
            "history": str(folder / "history.json"),
            "report": str(folder / "report.md"),
        },
    }


def write_artifacts(campaign: Campaign, summary: dict) -> None:
    from ..files import atomic_write

    found = campaign.candidates()
    champion = campaign.champion(found)
    atomic_write(
        campaign.folder / f"champion{campaign.loaded.suffix}", campaign.source_of(champion)
    )
    atomic_write(campaign.folder / "history.json", json.dumps(summary, indent=2) + "\n")
    atomic_write(campaign.folder / "report.md", report(summary, campaign.loaded))


def report(summary: dict, loaded: Loaded) -> str:
    """A short report.md: the outcome, the champion, and a line per candidate."""
    champ = summary["champion"]
    lines = [
        f"# evolve {loaded.spec.name}: run {summary['run_id']}",
        "",
        f"{summary['generations']} generations ({summary['stop_reason']}).",
        "",
    ]
    name = measure.label(summary["metric"]["name"], summary["metric"]["direction"])
    if champ["generation"] == 0:
        lines.append("No candidate beat the baseline at the stated confidence.")
    else:
        confirmation = champ["confirmation"]
        lines.append(
            f"Champion: generation {champ['generation']} {json.dumps(champ['params'])}, "
            f"{champ['speedup_vs_baseline']:.2f}x {name} over the baseline (lower bound "
            f"{champ['speedup_lower_bound']:.2f}x, {measure.bound_words(confirmation)}; "
            f"{confirmation['pairs']} interleaved pairs)."
        )
    lines += [
        "",
        f"| gen | params | status | {name} vs the champion then | lower bound |",
        "|---|---|---|---|---|",
    ]
    for c in summary["candidates"]:
        speed = "" if c["speedup"] is None else f"{c['speedup']:.3f}x"
        bound = "" if c["speedup_lower_bound"] is None else f"{c['speedup_lower_bound']:.3f}x"
        lines.append(
            f"| {c['generation']} | `{json.dumps(c['params'])}` | {c['status']} | {speed} | {bound} |"
        )
    return "\n".join(lines) + "\n"
