"""Coach edits that steer grid_ctf's offline competitor well or badly, for the tests of context
trials, probation and the charter."""

from __future__ import annotations

# what the offline run converges on (bench/bundle_trials.py's helpful targets), and the far
# corner of the space from it (no attackers, every guard far out)
GOOD = {"aggression": 0.82, "stealth": 0.61, "defense_radius": 2, "retreat_threshold": 0.81}
BAD = {"aggression": 0.0, "stealth": 1.0, "defense_radius": 6, "retreat_threshold": 1.0}


def targets(strategy: dict, marker: str) -> list[dict]:
    """Coach edits adding one ``target:`` bullet per parameter of ``strategy``."""
    return [
        {
            "op": "add_bullet",
            "text": f"{marker} {name}: {value}",
            "tags": [f"param:{name}", f"target:{name}={value}"],
        }
        for name, value in strategy.items()
    ]


def bundle(strategy: dict, marker: str) -> list[dict]:
    """The same bullets as a context bundle's entries."""
    return [
        {"kind": "bullet", "summary": edit["text"], "content": "", "tags": edit["tags"]}
        for edit in targets(strategy, marker)
    ]
