"""Role prompts: prose sections for a model, plus the state block for the offline agent."""

from __future__ import annotations

import json

from .. import state_block
from .context import FENCE_NOTE, Context, fence, strategy_interface

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
        f"in a ```json block, matching the strategy interface exactly. {FENCE_NOTE}"
    )
    sections = {name.replace("_", " ").title(): text for name, text in ctx.components.items()}
    return system, _user(sections, ctx.state(encoded=True))


def translator(text: str, schema: dict) -> tuple[str, str]:
    system = (
        "You are the translator. Extract the strategy described in the text as one JSON object "
        "matching the schema. Reply with the JSON object only."
    )
    return system, _user({"Schema": _dump(strategy_interface(schema)), "Text": text},
                         {"role": "translator", "strategy_schema": strategy_interface(schema), "text": text})


def analyst(ctx: Context, outcome: dict) -> tuple[str, str]:
    system = (
        "You are the analyst. Explain what changed between the challenger and the incumbent, "
        "which dimensions moved, and why, in a few Markdown bullets. Then estimate how each "
        "parameter affects the score over the whole trajectory, as a JSON block "
        '{"sensitivities": {"<parameter>": {"slope": <score change per full range>, "n": <changes seen>}}}.'
    )
    trajectory = "\n".join(ctx.trajectory_lines) or "(first generation)"
    return system, _user(
        {"Scenario": f"{ctx.scenario}: {ctx.description}", "Outcome": _dump(outcome),
         "Trajectory": trajectory},
        {"role": "analyst", "generation": ctx.generation, "outcome": outcome,
         "strategy_schema": ctx.interface(encoded=True),
         "trajectory": ctx.trajectory_state(encoded=True)})


def coach(ctx: Context, outcome: dict, analysis: str) -> tuple[str, str]:
    system = (
        "You are the coach. Propose knowledge edits as a JSON block "
        '{"edits": [{"op": "add_bullet|update_bullet|remove_bullet|add_hint|add_dead_end", '
        '"id": <entry id for update/remove>, "text": "...", "tags": ["..."]}]}. Keep only lessons '
        "the evidence supports; tag bullets with param:<name>, direction:<name>:up|down and "
        f"target:<name>=<value> so agents without a model can use them. {FENCE_NOTE}"
    )
    return system, _user(
        {"Analysis": fence("analysis", analysis), "Outcome": _dump(outcome),
         "Playbook": _playbook(ctx)},
        {"role": "coach", "generation": ctx.generation, "outcome": outcome, "analysis": analysis,
         "playbook": ctx.playbook_state(encoded=True),
         "strategy_schema": ctx.interface(encoded=True)})


def curator(ctx: Context, edits: list) -> tuple[str, str]:
    system = (
        "You are the curator. For each proposed edit decide accept, merge or reject, as a JSON "
        'block {"decisions": [{"index": 0, "decision": "accept|merge|reject", "reason": "..."}]}. '
        "Reject edits that are vague, contradict stronger evidence, or repeat the playbook."
    )
    return system, _user(
        {"Proposed edits": _dump(edits), "Playbook": _playbook(ctx)},
        {"role": "curator", "generation": ctx.generation, "edits": edits,
         "playbook": ctx.playbook_state(encoded=True)})


def _playbook(ctx: Context) -> str:
    """The whole playbook, fenced, for the coach and the curator."""
    return fence("playbook", "\n".join(ctx.playbook_lines) or "(empty)")
