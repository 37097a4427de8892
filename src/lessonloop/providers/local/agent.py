"""The local provider: one handler per role, answering from ``Request.state``.

- competitor: see ``competitor`` (this module hands it the request).
- translator: pulls ``key: value`` pairs for the schema's properties out of prose.
- analyst: dimension deltas of this generation, and each parameter's sensitivity over the
  whole trajectory (paired score change per full range of the parameter, least squares).
- coach: turns an advanced strategy's values (numbers, booleans and enums) into ``target``
  bullets with its tournament mean, only when it is the new best-known strategy: the gate
  judged it against the targets' strategy, or its tournament mean beats the one they record
  (validation seeds only report: no validated score steers a proposal), and significant sensitivities of numbers into ``direction`` bullets, updating or replacing
  the playbook's entries instead of piling up.
- curator: accepts well-formed edits that are new and refer to real entries.
"""

from __future__ import annotations

import json
import re
import time

from ... import canonical
from ...errors import LessonloopError
from ...json_blocks import find_block
from ...scenarios import space
from ..base import Completion, Request
from .competitor import Competitor
from .prior import best_known, direction_edits, target_edit

SIGNIFICANT_DELTA = 0.01
SIGNIFICANT_SLOPE, MIN_CHANGES = 0.05, 3
EDIT_OPS = ("add_bullet", "update_bullet", "remove_bullet", "add_hint", "add_dead_end")


def provider_for(route, settings) -> LocalProvider:
    """The provider for ``local`` (the registry's factory): it needs nothing from the route."""
    return LocalProvider()


class LocalProvider:
    name = "local"
    reads_state = True

    def __init__(self) -> None:
        self.competitor = Competitor()

    def complete(self, request: Request) -> Completion:
        started = time.perf_counter()
        state = request.state
        if state is None:
            raise LessonloopError(
                f"the local provider has no structured input for the "
                f"{request.role}: it plays the scenario roles only"
            )
        handler = getattr(self, f"_{request.role}", None)
        if handler is None:
            raise LessonloopError(f"the local provider has no behaviour for role {request.role!r}")
        text = handler(state, request)
        return Completion(text=text, latency_ms=(time.perf_counter() - started) * 1000, cost=0.0)

    # competitor ---------------------------------------------------------------------------
    def _competitor(self, state: dict, request: Request) -> str:
        return self.competitor.answer(state, request)

    # translator ---------------------------------------------------------------------------
    def _translator(self, state: dict, request: Request) -> str:
        names = list(state["strategy_schema"].get("properties", {}))
        text = state.get("text", "")
        found = {}
        for name in names:
            match = re.search(
                rf"\b{re.escape(name)}\b\s*[:=]\s*(\"[^\"]*\"|[-+0-9.eE]+|true|false)",
                text,
                re.IGNORECASE,
            )
            if match:
                raw = match.group(1)
                try:
                    found[name] = json.loads(raw.lower() if raw.isalpha() else raw)
                except json.JSONDecodeError:
                    continue
        return json.dumps(found)

    # analyst ------------------------------------------------------------------------------
    def _analyst(self, state: dict, request: Request) -> str:
        outcome = state["outcome"]
        lines = [f"## Generation {state.get('generation')} analysis", ""]
        lines.append(f"- Gate: **{outcome['decision']}** ({outcome['rationale']})")
        if outcome.get("incumbent") is None:
            lines.append(f"- First strategy scored {outcome['challenger_score']:.4f}.")
        else:
            changes = _changes(outcome["incumbent"], outcome.get("challenger") or {})
            if changes:
                lines.append("- Changed: " + ", ".join(f"{k} {a} → {b}" for k, a, b in changes))
            deltas = _dimension_deltas(outcome)
            if deltas:
                lines.append(
                    "- Dimension deltas (challenger − incumbent): "
                    + ", ".join(f"{k} {v:+.4f}" for k, v in deltas.items())
                )
            gains = [k for k, v in deltas.items() if v > SIGNIFICANT_DELTA]
            losses = [k for k, v in deltas.items() if v < -SIGNIFICANT_DELTA]
            lines.append(
                f"- Reading: the change helped {', '.join(gains) or 'no dimension'} and "
                f"hurt {', '.join(losses) or 'no dimension'}."
            )
        sens = sensitivities(state.get("trajectory", []), state.get("strategy_schema", {}))
        if sens:
            lines.append(
                "- Sensitivities over the run (paired score change per full range): "
                + ", ".join(f"{k} {v['slope']:+.3f} (n={v['n']})" for k, v in sens.items())
            )
        lines += ["", "```json", canonical.dumps({"sensitivities": sens}), "```"]
        return "\n".join(lines) + "\n"

    # coach --------------------------------------------------------------------------------
    def _coach(self, state: dict, request: Request) -> str:
        outcome = state["outcome"]
        playbook = state.get("playbook", [])
        params = {
            p.name: p for p in space.parameters(state["strategy_schema"]) if p.kind != "const"
        }
        edits: list[dict] = []
        if (
            outcome["decision"] == "advance"
            and outcome.get("challenger")
            and best_known(outcome, playbook, params)
        ):
            for name, value in outcome["challenger"].items():
                if name in params:
                    edits.extend(
                        target_edit(
                            playbook,
                            name,
                            value,
                            state.get("generation"),
                            outcome.get("challenger_score"),
                        )
                    )
        sens = _sensitivities_from(state.get("analysis", ""))
        for name, fit in sens.items():
            if (
                name in params
                and params[name].kind in ("number", "integer")
                and fit["n"] >= MIN_CHANGES
                and abs(fit["slope"]) >= SIGNIFICANT_SLOPE
            ):
                edits.extend(direction_edits(playbook, name, fit))
        if (
            outcome["decision"] == "rollback"
            and outcome.get("incumbent")
            and outcome.get("challenger")
        ):
            for name, before, after in _changes(outcome["incumbent"], outcome["challenger"]):
                direction = _direction(before, after)
                edits.append(
                    {
                        "op": "add_hint",
                        "tags": [f"param:{name}", f"tried:{name}:{direction}"],
                        "text": f"A move of {name} {direction} from the incumbent was rolled "
                        "back: look elsewhere first.",
                    }
                )
        return "```json\n" + json.dumps({"edits": edits}, indent=2) + "\n```\n"

    # curator ------------------------------------------------------------------------------
    def _curator(self, state: dict, request: Request) -> str:
        known = {e["id"]: e for e in state.get("playbook", [])}
        seen = {e["summary"].strip().lower() for e in known.values()}
        decisions = []
        for index, edit in enumerate(state.get("edits", [])):
            decision, reason = "accept", "well-formed and new"
            text = str(edit.get("text", "")).strip() if isinstance(edit, dict) else ""
            op = edit.get("op") if isinstance(edit, dict) else None
            if op not in EDIT_OPS or not text:
                decision, reason = "reject", "malformed"
            elif op in ("update_bullet", "remove_bullet") and edit.get("id") not in known:
                decision, reason = "reject", "refers to no playbook entry"
            elif op != "remove_bullet" and text.lower() in seen:
                decision, reason = "merge", "same as an existing entry: reinforce it"
            seen.add(text.lower())
            decisions.append({"index": index, "decision": decision, "reason": reason})
        return "```json\n" + json.dumps({"decisions": decisions}, indent=2) + "\n```\n"


# analysis -----------------------------------------------------------------------------------
def sensitivities(trajectory: list[dict], schema: dict) -> dict[str, dict]:
    """Least-squares slope of paired delta on each parameter's normalized change."""
    try:
        params = [p for p in space.parameters(schema) if p.kind in ("number", "integer")]
    except LessonloopError:
        return {}
    result = {}
    for p in params:
        sxy = sxx = 0.0
        n = 0
        for entry in trajectory:
            mine, theirs, delta = (
                entry.get("strategy"),
                entry.get("compared_to"),
                entry.get("mean_delta"),
            )
            if not (
                isinstance(mine, dict)
                and isinstance(theirs, dict)
                and isinstance(delta, (int, float))
            ):
                continue
            a, b = mine.get(p.name), theirs.get(p.name)
            if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or a == b:
                continue
            dx = (a - b) / (p.high - p.low or 1)
            sxy += dx * delta
            sxx += dx * dx
            n += 1
        if n:
            result[p.name] = {"slope": round(sxy / sxx, 4), "n": n}
    return result


def _sensitivities_from(analysis: str) -> dict:
    block = find_block(analysis or "", "sensitivities") or {}
    sens = block.get("sensitivities")
    if not isinstance(sens, dict):
        return {}
    return {
        k: v
        for k, v in sens.items()
        if isinstance(v, dict)
        and isinstance(v.get("slope"), (int, float))
        and isinstance(v.get("n"), int)
    }


def _changes(before: dict, after: dict) -> list[tuple[str, object, object]]:
    return [(k, before.get(k), v) for k, v in after.items() if before.get(k) != v]


def _direction(before: object, after: object) -> str:
    if isinstance(before, (int, float)) and isinstance(after, (int, float)):
        return "up" if after > before else "down"
    return "changed"


def _dimension_deltas(outcome: dict) -> dict[str, float]:
    mine = outcome.get("challenger_dimensions") or {}
    theirs = outcome.get("incumbent_dimensions") or {}
    return {k: mine[k] - theirs[k] for k in mine if k in theirs}
