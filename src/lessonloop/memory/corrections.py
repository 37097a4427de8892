"""What the user corrected, and what replaced a command they refused.

``corrections`` pairs a correction (in a prompt, or a refusal's reason) with the call it is
about: the latest one sharing a word with it, the latest edit for a correction on code style,
the latest call for one that names nothing, else none. ``refused_alternatives`` pairs a
refused command with the one run next in its place.
"""

from __future__ import annotations

import bisect
import re

from ..shell import command_stages
from .commands import command_core, command_head, command_heads, command_key, only_inspects
from .feedback import Feedback, prompt_feedback
from .phrasing import AUX, PRONOUN_ONLY, VERBS
from .tool_errors import tool_kind
from .transcript_model import EDIT_TOOLS, Correction, ToolCall, command_of, succeeded

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .transcript import Transcript


# words that relate nothing: instruction verbs, pronouns, and what any correction says
PLAIN_WORDS = (
    VERBS
    | AUX
    | PRONOUN_ONLY
    | frozenset(
        """
the and not don't dont didn't instead always never wrong that's it's right correct actually
please with for from into onto than rather prefer like just only also all any some each every
your you our we they their there here when then what which why how way should would could must
need needs want said told asked meant mean file files code repo project thing again more less
too very much many yes sure okay redacted
""".split()
    )
)
# a correction in these words is about how code is written: the latest edit
_STYLE = frozenset(
    """tab space indentation indent quote semicolon comma naming camelcase
snake_case kebab-case docstring comment type hint annotation formatting whitespace brace
bracket newline""".split()
)
_TERM = re.compile(r"[a-z0-9][a-z0-9_+-]*[a-z0-9]")


def _terms(text: str) -> set[str]:
    """The distinctive words of a text, lowercase, singular, and identifiers split too
    (``orders_core`` gives ``orders`` and ``core``)."""
    out: set[str] = set()
    for word in _TERM.findall(text.lower()[:4000]):
        for term in {word, *re.split(r"[_+-]", word)}:
            term = (
                term[:-1]
                if len(term) > 3 and term.endswith("s") and not term.endswith("ss")
                else term
            )
            if len(term) >= 3 and term not in PLAIN_WORDS:
                out.add(term)
    return out


def _call_terms(call: ToolCall) -> set[str]:
    values = [call.name, call.subject, *(v for v in call.input.values() if isinstance(v, str))]
    return _terms(" ".join(values))


def _about(correction: Feedback, turn: list[ToolCall]) -> ToolCall | None:
    """The call in ``turn`` a correction is about: the latest one sharing a word with it (a
    tool, package, file...); for a correction on code style, the latest edit; for one that
    names nothing ("that's wrong"), the latest call. None when nothing relates: "use httpx"
    does not correct an unrelated ``python flush.py``."""
    wanted = _terms(correction.text or correction.lesson)
    if not wanted:
        return turn[-1] if turn else None
    for call in reversed(turn):
        if wanted & _call_terms(call):
            return call
    if wanted & _STYLE:
        return next((c for c in reversed(turn) if c.name.lower() in EDIT_TOOLS), None)
    return None


_LOOKS = frozenset("list ls show status info --help -h --version".split())


def refused_alternatives(transcript: Transcript) -> list[tuple[str, str, ToolCall, ToolCall]]:
    """A refused command and the one that replaced it: the very next call of the main chain, a
    command that succeeded and runs the same program as a step of the refused one (``uv tool
    upgrade --reinstall X`` after ``... uv tool uninstall X && uv tool install --reinstall .``
    was refused). As (the new command, the refused step it replaces, refused call, new call)."""
    main = [c for c in transcript.calls if not c.sidechain and c.completed]
    out = []
    for refused, after in zip(main, main[1:]):
        if (
            not refused.rejected
            or tool_kind(refused.name) != "bash"
            or not succeeded(after)
            or tool_kind(after.name) != "bash"
        ):
            continue
        new = command_core(command_of(after)).strip()
        head = command_head(new)
        if (
            not head
            or only_inspects(new)
            or len(command_heads(new)) != 1
            or new.split()[-1] in _LOOKS
        ):
            continue
        steps = [s.strip() for s in command_stages(command_of(refused)) if s.strip()]
        same = [s for s in steps if command_head(s) == head]
        if same and command_key(same[-1]) != command_key(new):
            out.append((new, same[-1], refused, after))
    return out


def corrections(transcript: Transcript) -> list[Correction]:
    """User corrections (main chain), each with the call it corrects: the latest main-chain
    call since the previous prompt that it is about (see ``_about``), else None."""
    out: list[Correction] = []
    main_calls = [c for c in transcript.calls if not c.sidechain]
    indexes = [c.index for c in main_calls]
    previous = -1
    for prompt in transcript.prompts:
        if prompt.sidechain:
            continue
        for found in prompt_feedback(prompt.text):
            if found.kind != "correction":
                continue
            turn = main_calls[
                bisect.bisect_right(indexes, previous) : bisect.bisect_left(indexes, prompt.index)
            ]
            out.append(Correction(feedback=found, corrected=_about(found, turn)))
        previous = prompt.index
    for said in transcript.said:  # a refusal's reason corrects the refused call
        if said.kind == "rejection" and not said.sidechain:
            for found in prompt_feedback(said.text, corrected=True):
                if found.kind == "correction" or found.lesson:
                    out.append(Correction(feedback=found, corrected=said.call))
    return out
