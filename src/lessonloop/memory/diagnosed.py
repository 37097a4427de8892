"""What the agent found wrong and then fixed, without an error to key it on: "Now I understand
the issue. The `isSidechain` field exists in the model but it's not being used to add the
CSS classes", followed by the edit, followed by a check that passed.

Much of a session's real learning happens this way (a failing test the user reported, a
request to handle a case the code got wrong), and the agent's own diagnosis says what a later
session needs to know. It is kept only with evidence: the agent announced it as its finding
(an opener, see ``diagnosis``), changed a file next, and the first command it ran after the
change succeeded. A diagnosis an error lesson already holds as its cause is not kept twice.
"""

from __future__ import annotations

from .candidate import Candidate
from .commands import only_inspects
from .diagnosis import explanations, in_brief
from .error_lessons import changed_lines
from .tool_errors import tool_kind
from .transcript_model import EDIT_TOOLS, base_name, command_of, failed, file_of


def diagnosed_changes(transcript, causes: set[str]) -> list[Candidate]:
    """A finding for each announced diagnosis (main chain) that an edit and a passing check
    followed before the user spoke again; none for a sentence in ``causes``."""
    prompts = sorted(p.index for p in transcript.prompts if not p.sidechain)
    found: list[Candidate] = []
    for text in transcript.texts:
        if text.sidechain:
            continue
        opened = [e for e in explanations(text.text) if e.opened]
        if not opened or any(e.sentence in cause for e in opened for cause in causes):
            continue
        turn_end = next((index for index in prompts if index > text.index), None)
        later = [
            call
            for call in transcript.calls
            if call.chain == text.chain
            and call.index > text.index
            and (turn_end is None or call.index < turn_end)
        ]
        evidence = _edit_then_check(later)
        if evidence is None:
            continue
        edit, check = evidence
        explained = opened[0]
        summary = in_brief(explained.sentence)
        if not summary:
            continue
        changed = changed_lines(edit, 200)
        found.append(
            Candidate(
                kind="observation",
                summary=summary,
                content=f"{explained.detail}\nChanged: {base_name(file_of(edit))}"
                + (f": {changed}" if changed else "")
                + f"\nChecked with `{command_of(check)[:200]}`, which succeeded.",
                why="The agent's diagnosis, then its change, then a check that passed.",
                tags=["finding", "diagnosis"],
            )
        )
    return found


def _edit_then_check(calls: list) -> tuple | None:
    """The first edit among ``calls`` (before any command that changes something) and the
    first command after it that changes or checks something, when that command succeeded."""
    edit = None
    for call in calls:
        is_edit = call.name.lower() in EDIT_TOOLS
        is_command = tool_kind(call.name) == "bash" and not only_inspects(command_of(call))
        if edit is None:
            if is_edit and call.completed and not failed(call):
                edit = call
            elif is_command:
                return None  # a command ran before any change: not this diagnosis' fix
            continue
        if is_command:
            ok = call.completed and not call.rejected and not failed(call)
            return (edit, call) if ok else None
    return None
