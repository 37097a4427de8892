"""What a generation teaches: the analyst, coach and curator reflect on what was played, and
the run's knowledge changes only through admission (evidence for the bullets in context, a
dead end for a rolled-back strategy, the edits the curator accepted). ``Reflection`` is the
part of ``loop/runner.Runner`` that reads and writes the scenario's knowledge."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import canonical
from ..knowledge import admission, edits
from ..knowledge import entries as knowledge_entries
from ..knowledge.render import view_texts
from ..promotion import probation, records, switch
from ..promotion.charter import Charter
from ..providers.base import Completion
from . import gate, prompts
from .answers import answer_text
from .context import Context
from .options import RunOptions
from .trials import ContextTrial

DEAD_ENDS_IN_CONTEXT = 20  # the most recent; all of them stay in dead_ends.md
HINTS_IN_CONTEXT = 20  # the strongest


def in_context(entries: list[knowledge_entries.Entry]) -> dict:
    """What of ``entries`` a competitor's context holds: the playbook (ranked), the strongest
    hints and the most recent dead ends. Both caps are selection at load time; the budget never
    trims what is loaded."""
    by_kind = {
        kind: [e for e in entries if e.kind == kind] for kind in ("bullet", "hint", "dead_end")
    }
    return {
        "playbook": knowledge_entries.ranked(by_kind["bullet"]),
        "hints": knowledge_entries.ranked(by_kind["hint"])[:HINTS_IN_CONTEXT],
        "dead_ends": by_kind["dead_end"][-DEAD_ENDS_IN_CONTEXT:],
    }


class Reflection:
    """The scenario's knowledge for a run: read for the context, learned from each generation.
    Needs the run's ``store``, ``run_id``, knowledge ``scope`` and ``_call``."""

    store: Any
    run_id: str
    scope: str
    options: RunOptions
    charter: Charter  # what an accepted candidate needs to be served (promotion/charter.py)
    entries: list[knowledge_entries.Entry]
    views: dict[Path, str]
    _call: Callable[..., Completion]

    def _reflect(self, ctx: Context, summary: dict, calls: list) -> tuple[str, list, str]:
        """The analyst's analysis of what was played, the coach's proposed edits (the prompt's
        example left out) and the curator's answer on them."""
        analysis = self._call("analyst", ctx, prompts.analyst(ctx, summary), calls).text
        coach = self._call("coach", ctx, prompts.coach(ctx, summary, analysis), calls)
        proposed = [
            e
            for e in edits.proposed(answer_text(coach))
            if not (isinstance(e, dict) and e.get("text") == prompts.COACH_EXAMPLE_TEXT)
        ]
        curator_text = ""
        if proposed:
            curator_text = answer_text(
                self._call("curator", ctx, prompts.curator(ctx, proposed), calls)
            )
        return analysis, proposed, curator_text

    def _refresh_knowledge(self, write: Callable[[dict], None]) -> None:
        """Read the scope's active knowledge once (for the views now and the next generation's
        context) and write the views whose text changed."""
        self.entries = knowledge_entries.active(self.store, self.scope)
        changed = {
            path: text
            for path, text in view_texts(self.scope, self.entries).items()
            if self.views.get(path) != text
        }
        if changed:
            self.views.update(changed)
            write(changed)

    def _knowledge(self) -> dict:
        """The scenario's active playbook (ranked), its strongest hints and most recent dead
        ends (``in_context``)."""
        return in_context(self.entries)

    def _learn(
        self,
        index: int,
        decision: str,
        compared: bool,
        summary: dict,
        manifest: dict,
        proposed: list,
        curator_text: str,
        trial: ContextTrial | None = None,
        watched: list | None = None,
    ) -> None:
        """Evidence for the bullets in context (only when the gate compared challenger and
        incumbent conclusively), a dead end for a rolled-back strategy, and the coach's edits the curator
        accepted — all through admission. With a context ``trial`` (``loop/trials.py``), the
        edits are admitted only when the trial accepted their bundle and the charter lets it be
        served (``promotion/charter.py``; else it is held, a ``hold`` decision), which then
        becomes the scope's active one, on probation; the candidate, its trials and the verdict
        are stored either way. ``watched``: this generation's probation pairs
        (``ContextTrials._probation_pairs``), stored and decided here."""
        where = {"run_id": self.run_id, "generation_index": index}
        in_context = manifest.get("knowledge", {}).get("playbook", [])
        if compared and decision in (gate.ADVANCE, gate.ROLLBACK) and in_context:
            admission.record_evidence(
                self.store,
                in_context,
                decision == gate.ADVANCE,
                render_views=False,
                run_id=self.run_id,
                generation_index=index,
            )
        proposals = []
        if decision == gate.ROLLBACK and summary["challenger"] is not None and summary["incumbent"]:
            proposals.append(
                admission.Proposal(
                    kind="dead_end",
                    scope=self.scope,
                    source="evidence",
                    summary=(
                        f"Rolled back: scored {summary['challenger_score']:.4f} against the "
                        f"incumbent's {summary['incumbent_score'] or 0:.4f}"
                    ),
                    content=canonical.dumps(summary["challenger"]),
                    tags=["dead-end", f"score:{summary['challenger_score']:.4f}"],
                    detail=summary["rationale"],
                    run_id=self.run_id,
                    generation_index=index,
                )
            )
        for watch, played in watched or []:  # before an activation replaces what was watched
            probation.step(self.store, watch, played)
        serve = False
        if trial is not None:
            candidate = trial.record(self.store.conn, self.scope, self.run_id, index)
            held = switch.held(self.store.conn, candidate, trial.verdict, self.charter)
            serve = trial.verdict.accepted and held is None
            if not serve:
                proposed, curator_text = [], ""  # what is served stays as it is
        edits.apply(
            self.store,
            self.scope,
            proposed,
            curator_text,
            where,
            proposals,
            hold=self.options.review,
        )
        if serve and trial is not None:
            records.activate(
                self.store.conn,
                candidate,
                "gate",
                trial.verdict.rationale,
                probation=probation.GENERATIONS,
            )
