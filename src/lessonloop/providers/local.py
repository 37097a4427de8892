"""The offline agent: a real player for every role, with no model and no network.

It reads the machine-readable state block of each prompt (see ``state_block``) and answers
as the role asks: the competitor takes a seeded search step around the incumbent, the
translator pulls ``key: value`` pairs out of prose, the analyst measures dimension deltas and
parameter changes, the coach turns them into proposed knowledge edits, and the curator
accepts well-formed, distinct edits.
"""

from __future__ import annotations

import json
import random
import re
import time

from .. import state_block
from ..errors import LessonloopError
from ..scenarios import space
from .base import Completion, Request

BASE_STEP = 0.15
SIGNIFICANT = 0.01


class LocalProvider:
    name = "local"

    def complete(self, request: Request) -> Completion:
        started = time.perf_counter()
        state = state_block.parse(request.prompt)
        if state is None:
            raise LessonloopError(
                f"the local provider needs a lessonloop-state block in the {request.role} prompt"
            )
        handler = getattr(self, f"_{request.role}", None)
        if handler is None:
            raise LessonloopError(f"the local provider has no behaviour for role {request.role!r}")
        text = handler(state, request)
        return Completion(text=text, latency_ms=(time.perf_counter() - started) * 1000)

    # competitor ---------------------------------------------------------------------------
    def _competitor(self, state: dict, request: Request) -> str:
        rng = random.Random(request.seed)
        schema = state["strategy_schema"]
        incumbent = state.get("incumbent")
        tried = [json.dumps(s, sort_keys=True) for s in state.get("tried", [])]
        attempt = int(state.get("attempt", 0))
        step = BASE_STEP * (1 + 0.5 * attempt)
        proposal = None
        for _ in range(20):
            if incumbent is None:
                candidate = space.sample(schema, rng)
            else:
                candidate = space.perturb(incumbent["strategy"], schema, step, rng)
            if json.dumps(candidate, sort_keys=True) not in tried and (
                incumbent is None or candidate != incumbent["strategy"]
            ):
                proposal = candidate
                break
        proposal = proposal or candidate
        if incumbent is None:
            reason = "No incumbent yet: a seeded random point in the strategy space."
        else:
            changed = [
                f"{key} {incumbent['strategy'].get(key)} -> {value}"
                for key, value in proposal.items()
                if incumbent["strategy"].get(key) != value
            ]
            reason = (
                f"Search step {step:.2f} around the incumbent (score "
                f"{incumbent.get('score', 0):.4f}); changed: {', '.join(changed) or 'nothing'}."
            )
        return f"{reason}\n\n```json\n{json.dumps(proposal, indent=2)}\n```\n"

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
            return "\n".join(lines) + "\n"
        changes = _changes(outcome["incumbent"], outcome["challenger"])
        if changes:
            lines.append("- Changed: " + ", ".join(f"{k} {a} → {b}" for k, a, b in changes))
        deltas = _dimension_deltas(outcome)
        if deltas:
            lines.append(
                "- Dimension deltas (challenger − incumbent): "
                + ", ".join(f"{k} {v:+.4f}" for k, v in deltas.items())
            )
        gains = [k for k, v in deltas.items() if v > SIGNIFICANT]
        losses = [k for k, v in deltas.items() if v < -SIGNIFICANT]
        if gains or losses:
            lines.append(
                f"- Reading: the change helped {', '.join(gains) or 'no dimension'} "
                f"and hurt {', '.join(losses) or 'no dimension'}."
            )
        else:
            lines.append("- Reading: no dimension moved by more than 0.01; the change was neutral.")
        return "\n".join(lines) + "\n"

    # coach --------------------------------------------------------------------------------
    def _coach(self, state: dict, request: Request) -> str:
        outcome = state["outcome"]
        edits = []
        if outcome.get("incumbent") is not None and outcome.get("challenger") is not None:
            changes = _changes(outcome["incumbent"], outcome["challenger"])
            deltas = _dimension_deltas(outcome)
            moved = [k for k, v in deltas.items() if abs(v) > SIGNIFICANT]
            for name, before, after in changes:
                direction = _direction(before, after)
                effect = ", ".join(f"{k} {deltas[k]:+.3f}" for k in moved) or "no clear effect"
                tags = [f"param:{name}", f"direction:{direction}"]
                if outcome["decision"] == "advance":
                    edits.append({"op": "add_bullet", "text": (
                        f"Moving {name} {direction} ({before} → {after}) helped: {effect}."),
                        "tags": tags + ["evidence:advance"]})
                elif outcome["decision"] == "rollback":
                    edits.append({"op": "add_hint", "text": (
                        f"Moving {name} {direction} ({before} → {after}) did not help: {effect}."),
                        "tags": tags + ["evidence:rollback"]})
        if outcome["decision"] == "rollback" and outcome.get("challenger") is not None:
            edits.append({"op": "add_dead_end", "text": (
                f"Strategy {json.dumps(outcome['challenger'], sort_keys=True)} scored "
                f"{outcome['challenger_score']:.4f}, below the incumbent."), "tags": ["dead-end"]})
        return "```json\n" + json.dumps({"edits": edits}, indent=2) + "\n```\n"

    # curator ------------------------------------------------------------------------------
    def _curator(self, state: dict, request: Request) -> str:
        seen = set()
        decisions = []
        for index, edit in enumerate(state.get("edits", [])):
            text = str(edit.get("text", "")).strip() if isinstance(edit, dict) else ""
            op = edit.get("op") if isinstance(edit, dict) else None
            key = (op, text.lower())
            if op not in ("add_bullet", "update_bullet", "remove_bullet", "add_hint",
                          "add_dead_end") or not text:
                decisions.append({"index": index, "decision": "reject", "reason": "malformed"})
            elif key in seen:
                decisions.append({"index": index, "decision": "reject", "reason": "duplicate"})
            else:
                seen.add(key)
                decisions.append({"index": index, "decision": "accept", "reason": "well-formed"})
        return "```json\n" + json.dumps({"decisions": decisions}, indent=2) + "\n```\n"


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
