"""The coach's proposed edits and the curator's verdicts, turned into admission calls.

Scenario runs and task runs both learn this way: the coach proposes edits in a JSON block
(found tolerantly in its answer), the curator accepts, merges or rejects each, and whatever
is accepted goes through admission — the only writer of knowledge.
"""

from __future__ import annotations

from ..json_blocks import find_block
from ..store.db import Store
from . import admission

EDIT_KINDS = {"add_bullet": "bullet", "add_hint": "hint", "add_dead_end": "dead_end"}


def proposed(coach_text: str) -> list:
    """The coach's proposed edits, found tolerantly in its answer."""
    block = find_block(coach_text, "edits") or {}
    return block["edits"] if isinstance(block.get("edits"), list) else []


def entry_id(value) -> int | None:
    """A knowledge id as a model may write it: 12 or "12"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def curator_verdicts(text: str, count: int) -> list[str]:
    """The curator's decision per edit index; edits it did not mention are rejected."""
    block = find_block(text, "decisions") or {}
    verdicts = ["reject"] * count
    for item in block.get("decisions", []) if isinstance(block.get("decisions"), list) else []:
        if (
            isinstance(item, dict)
            and isinstance(item.get("index"), int)
            and 0 <= item["index"] < count
        ):
            verdict = str(item.get("decision", "reject")).lower()
            verdicts[item["index"]] = verdict if verdict in ("accept", "merge") else "reject"
    return verdicts


def proposal_from_edit(edit, verdict: str, scope: str, where: dict):
    """An admission proposal for an accepted coach edit (None when rejected or malformed)."""
    if verdict == "reject" or not isinstance(edit, dict):
        return None
    text = str(edit.get("text") or edit.get("summary") or "").strip()
    if not text:
        return None
    tags = edit.get("tags")
    if not isinstance(tags, list):
        tags = []
    kind = EDIT_KINDS.get(edit.get("op", ""), "bullet")
    return admission.Proposal(
        kind=kind,
        scope=scope,
        summary=text,
        content=text if len(text) > 120 else "",
        why=str(edit.get("why") or ""),
        how_to_apply=str(edit.get("how_to_apply") or ""),
        tags=[str(t).strip("<> ").replace("<", "").replace(">", "") for t in tags],
        source="coach",
        approved_by=verdict,
        **where,
    )


def apply(
    store: Store,
    scope: str,
    edits: list,
    curator_text: str,
    where: dict,
    proposals: list | None = None,
    hold: bool = False,
) -> None:
    """Admit the accepted edits (with any ``proposals`` of the caller's own) in ``scope``;
    ``hold`` (a ``--review`` run): new entries wait as pending for the user's approval."""
    proposals = list(proposals or [])
    for edit, verdict in zip(edits, curator_verdicts(curator_text, len(edits))):
        proposal = proposal_from_edit(edit, verdict, scope, where)
        if proposal is None:
            continue
        target = entry_id(edit.get("id"))
        if edit.get("op") == "update_bullet" and target is not None:
            admission.update(store, target, proposal, render_views=False)
        elif edit.get("op") == "remove_bullet" and target is not None:
            admission.retire(
                store,
                target,
                f"coach: {proposal.summary}",
                scope=scope,
                kind="bullet",
                render_views=False,
            )
        elif edit.get("op") in EDIT_KINDS:
            proposals.append(proposal)
    if proposals:
        admission.admit(store, proposals, render_views=False, hold=hold)
