"""``lessonloop skill export SCOPE``: a scope's strongest knowledge as a Claude Code Agent Skill,
``<dir>/<name>/SKILL.md`` (``<project>/.claude/skills`` unless told otherwise), so an agent
that never ran lessonloop still gets what its runs and sessions proved.

The frontmatter follows the Agent Skills rules (``check_frontmatter`` states them and the tests
hold the output to them): ``name`` of lowercase letters, digits and single hyphens, at most 64
characters, without the reserved words; ``description`` saying what the skill is and when to
use it, at most 1024 characters, no XML tags. The description stays under Claude Code's
250-character skill listing so it is never cut there.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError, UsageError
from .knowledge_share import resolve
from .stores import reading

if TYPE_CHECKING:
    from ..knowledge.entries import Entry

NAME_MAX = 64
DESCRIPTION_MAX = 1024
LISTING_MAX = 250  # Claude Code's /skills listing shows this much of a description
RESERVED = ("anthropic", "claude")
NAME_RULE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DEAD_END_SHOWN = 300  # characters of a dead end's strategy
PER_SECTION = 25  # the strongest entries of each kind: SKILL.md stays far under 500 lines
# (kinds, heading, what an agent does with them) in the order SKILL.md shows them
SECTIONS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("bullet",), "Playbook", "lessons that worked, most proven first"),
    (("hint",), "Hints", "what to try"),
    (("dead_end",), "Dead ends", "tried and failed: do not repeat"),
    (("preference",), "Preferences", "what the user wants"),
    (("decision",), "Decisions", "choices made, with their reasons"),
    (("pattern",), "Known errors and fixes", "apply the fix when the error shows up"),
    (("observation",), "Facts", "learned about this project"),
)


def skill_name(scope: str) -> str:
    """A valid skill name for ``scope``: ``lessonloop-grid-ctf``, ``lessonloop-task-fix-bug``,
    ``lessonloop-project-memories``."""
    kind, _, rest = scope.partition(":")
    words = rest if kind == "scenario" else f"{scope}-memories" if not rest else scope
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower())
    for word in RESERVED:
        slug = slug.replace(word, "")
    slug = re.sub(r"-+", "-", slug).strip("-") or "knowledge"
    return f"lessonloop-{slug}"[:NAME_MAX].rstrip("-")


def check_frontmatter(name: str, description: str, folder: str) -> list[str]:
    """What breaks the Agent Skills rules in a SKILL.md's ``name`` and ``description`` (empty
    when nothing does)."""
    problems = []
    if not 1 <= len(name) <= NAME_MAX or not NAME_RULE.match(name):
        problems.append("name: 1-64 lowercase letters, digits and single inner hyphens")
    if any(word in name for word in RESERVED):
        problems.append("name: contains a reserved word")
    if name != folder:
        problems.append("name: differs from its folder's name")
    if not description.strip() or len(description) > DESCRIPTION_MAX:
        problems.append("description: 1-1024 characters")
    if re.search(r"<[^>]*>", description) or re.search(r"<[^>]*>", name):
        problems.append("an XML tag in the frontmatter")
    if "use when" not in description.lower():
        problems.append("description: says when to use it")
    return problems


def _plain(text: str) -> str:
    """``text`` as one line without anything a reader could take for markup (<, >)."""
    return " ".join(text.replace("<", "‹").replace(">", "›").split())


def _describe(scope: str, counts: dict[str, int]) -> str:
    kind, _, rest = scope.partition(":")
    held = f"{sum(counts.values())} entries: " + ", ".join(h.lower() for h in counts)
    if kind == "scenario":
        what = f"What lessonloop runs proved about the {rest} scenario ({held})."
        when = f"Use when writing, tuning or reviewing a {rest} strategy."
    elif kind == "task":
        what = f"What lessonloop learned improving the agent task {rest} ({held})."
        when = f"Use when working on the {rest} task or outputs like it."
    elif scope == "user":
        what = f"The user's own conventions and lessons across projects ({held})."
        when = "Use when choosing tools, style or workflow for this user."
    else:
        what = f"This project's memories from past coding sessions ({held})."
        when = "Use when working in this project: before running its tests or builds, "
        when += "choosing tools, or fixing an error seen before."
    text = _plain(f"{what} {when}")
    return (
        text
        if len(text) <= LISTING_MAX
        else _plain(f"{what[: LISTING_MAX - len(when) - 4]}… {when}")
    )


def _line(entry: Entry) -> str:
    from ..safety import clean

    evidence = f"+{entry.helpful}/-{entry.harmful}, seen {entry.seen}"
    how = f" — {entry.how_to_apply}" if entry.how_to_apply else ""
    if entry.kind == "dead_end" and entry.content:  # the strategy not to try again
        how += f" — tried: {entry.content[:DEAD_END_SHOWN]}"
    why = f" (why: {entry.why})" if entry.why and entry.kind in ("decision", "preference") else ""
    pin = "pinned, " if entry.pinned else ""
    return "- " + _plain(clean(f"{entry.summary}{how}{why}")) + f" [{pin}{evidence}]"


def _strongest(entries: list[Entry]) -> list[Entry]:
    """Pinned first, then evidence (helpful − harmful), repeats and recency: ``ranked``."""
    from ..knowledge.entries import ranked

    return sorted(ranked(entries), key=lambda entry: not entry.pinned)[:PER_SECTION]


def skill_text(scope_name: str) -> tuple[str, str, str, dict[str, int]]:
    """The skill for ``scope_name`` (see ``knowledge_share.resolve``): its name, description,
    SKILL.md text and how many entries each section holds."""
    from ..knowledge.entries import active

    try:
        root, scope = resolve(scope_name)
    except UsageError:  # named as the argument it is here, not as a --scope option
        raise UsageError(
            f"{scope_name!r} is not a scope: give a scenario name, task:NAME, project or user"
        ) from None
    if scope is None:
        raise NotFoundError("a skill is made from one scope: give project, user, a scenario "
                            "name or task:NAME, not all")  # fmt: skip
    with reading(root) as store:
        entries = active(store, scope) if store is not None else []
    parts, counts = [], {}
    for kinds, heading, purpose in SECTIONS:
        chosen = _strongest([entry for entry in entries if entry.kind in kinds])
        if chosen:
            counts[heading] = len(chosen)
            parts += ["", f"## {heading} ({purpose})", "", *(_line(entry) for entry in chosen)]
    if not counts:
        raise NotFoundError(f"no active knowledge in scope {scope!r} to make a skill of")
    name = skill_name(scope)
    description = _describe(scope, counts)
    body = [
        "---",
        f"name: {name}",
        f"description: {json.dumps(description)}",
        "---",
        "",
        f"# {_plain(scope)}: what lessonloop learned",
        "",
        "Exported by `lessonloop skill export` from the knowledge store, strongest first "
        "(+helped/-misled evidence, how often seen). Prefer these over guesses; an entry "
        "may be out of date, so check it against the code when it matters.",
        *parts,
    ]
    return name, description, "\n".join(body) + "\n", counts


def export_skill(scope_name: str, directory: Path | None = None) -> dict[str, Any]:
    """Write ``<directory>/<name>/SKILL.md`` (``directory``: ``.claude/skills`` in
    ``$CLAUDE_PROJECT_DIR``, else in the current folder);
    ``{name, description, path, sections}``."""
    from ..files import atomic_write

    name, description, text, counts = skill_text(scope_name)
    if directory is None:  # the project Claude Code works in
        directory = Path(os.environ.get("CLAUDE_PROJECT_DIR") or ".").absolute() / ".claude/skills"
    folder = directory / name
    atomic_write(folder / "SKILL.md", text)
    return {
        "name": name,
        "description": description,
        "path": str(folder / "SKILL.md"),
        "sections": counts,
    }
