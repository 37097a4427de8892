"""Role prompts built from the generation's context, with a manifest of what went in.

Each prompt is prose for a model plus the machine-readable state block for the offline agent.
The manifest (component names, sizes and hashes) is stored with every generation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from .. import state_block

TRAJECTORY_LENGTH = 8


@dataclass
class Context:
    """What the competitor sees for one attempt of one generation."""

    scenario: str
    description: str
    strategy_schema: dict
    generation: int
    attempt: int
    incumbent: dict | None  # {"strategy": ..., "score": ...}
    trajectory: list[dict]
    last_analysis: str = ""
    failure_report: str = ""
    tried: list[dict] = field(default_factory=list)

    def components(self) -> dict[str, str]:
        parts = {
            "rules": self.description,
            "strategy_interface": json.dumps(self.strategy_schema, indent=2, sort_keys=True),
            "evaluation": (
                "Each strategy plays paired matches against the incumbent on shared seeds. "
                "A match returns a score in [0, 1] with named dimensions. The challenger "
                "advances when its mean paired delta clears the threshold, it wins most pairs "
                "and the gain holds on unseen holdout seeds."
            ),
        }
        if self.incumbent:
            parts["incumbent"] = json.dumps(self.incumbent, sort_keys=True)
        if self.trajectory:
            parts["trajectory"] = "\n".join(
                _trajectory_line(t) for t in self.trajectory[-TRAJECTORY_LENGTH:]
            )
        if self.last_analysis:
            parts["last_analysis"] = self.last_analysis
        if self.failure_report:
            parts["failure_report"] = self.failure_report
        return parts

    def manifest(self) -> dict:
        return {
            "generation": self.generation,
            "attempt": self.attempt,
            "components": [
                {"name": name, "chars": len(text),
                 "sha256": hashlib.sha256(text.encode()).hexdigest()}
                for name, text in self.components().items()
            ],
        }


def _trajectory_line(entry: dict) -> str:
    delta = entry.get("mean_delta")
    delta_text = f"{delta:+.4f}" if isinstance(delta, (int, float)) else "n/a"
    return (
        f"gen {entry['generation']}: score {entry['mean_score']:.4f}, paired delta {delta_text}, "
        f"gate {entry['gate_decision']}, strategy {json.dumps(entry.get('strategy'), sort_keys=True)}"
    )


def _user(sections: dict[str, str], state: dict) -> str:
    """Markdown sections for a model, then the state block for the offline agent."""
    body = "\n\n".join(f"## {title}\n{text}" for title, text in sections.items())
    return f"{body}\n\n{state_block.render(state)}"


def _dump(value: object) -> str:
    return json.dumps(value, indent=2, sort_keys=True)


def competitor(ctx: Context) -> tuple[str, str]:
    system = (
        f"You are the competitor in the scenario '{ctx.scenario}'. Propose one strategy that "
        "beats the incumbent. Reply with a short rationale and the strategy as one JSON object "
        "in a ```json block, matching the strategy interface exactly."
    )
    sections = {name.replace("_", " ").title(): text for name, text in ctx.components().items()}
    state = {
        "role": "competitor",
        "generation": ctx.generation,
        "attempt": ctx.attempt,
        "strategy_schema": ctx.strategy_schema,
        "incumbent": ctx.incumbent,
        "trajectory": ctx.trajectory[-TRAJECTORY_LENGTH:],
        "tried": ctx.tried,
        "failure": ctx.failure_report or None,
    }
    return system, _user(sections, state)


def translator(text: str, schema: dict) -> tuple[str, str]:
    system = (
        "You are the translator. Extract the strategy described in the text as one JSON object "
        "matching the schema. Reply with the JSON object only."
    )
    return system, _user({"Schema": _dump(schema), "Text": text},
                         {"role": "translator", "strategy_schema": schema, "text": text})


def analyst(ctx: Context, outcome: dict) -> tuple[str, str]:
    system = (
        "You are the analyst. Explain what changed between the challenger and the incumbent, "
        "which dimensions moved, and why, in a few Markdown bullets."
    )
    return system, _user({"Scenario": f"{ctx.scenario}: {ctx.description}", "Outcome": _dump(outcome)},
                         {"role": "analyst", "generation": ctx.generation, "outcome": outcome})


def coach(ctx: Context, outcome: dict, analysis: str) -> tuple[str, str]:
    system = (
        "You are the coach. Propose knowledge edits as a JSON block "
        '{"edits": [{"op": "add_bullet|update_bullet|remove_bullet|add_hint|add_dead_end", '
        '"text": "...", "tags": ["..."]}]}. Keep only lessons the evidence supports.'
    )
    return system, _user({"Analysis": analysis, "Outcome": _dump(outcome)},
                         {"role": "coach", "generation": ctx.generation, "outcome": outcome})


def curator(ctx: Context, edits: list) -> tuple[str, str]:
    system = (
        "You are the curator. For each proposed edit decide accept, merge or reject, as a JSON "
        'block {"decisions": [{"index": 0, "decision": "accept|merge|reject", "reason": "..."}]}.'
    )
    return system, _user({"Proposed edits": _dump(edits)},
                         {"role": "curator", "generation": ctx.generation, "edits": edits})
