"""Evidence for memories: whether each memory given to a session helped it or misled it.

Memorize calls ``judge_session`` once per session, after the session's candidates are
admitted. It reads the session's injection log (``injections``), its transcript and its
captured feedback, and for each memory given to the session counts the use (``injected`` + 1
once per session, ``last_used_at``) and judges the memory on what happened after it was given
(the first time: a call's or a prompt's transcript timestamp against the log's ``at``):

- a memory of an error and its fix (its content holds ``Error: ...`` and ``Fixed by: ...``,
  as memorize writes them): **helped** when its fix ran and the error did not come back, or the
  error came back and its fix ran and then the step succeeded; **misled** when the error came
  back and another fix worked (``error_lessons`` paired on the part of the session after the
  memory was given, so its evidence rules decide what "worked" means);
- a pattern or an observation that names an error in its own words (``memory add``, MCP
  ``memory_store``, imports: "When `npm test` fails with Cannot find module x, run `npm i x`"),
  the same way: the error is a failure whose error line shares most of its distinctive words
  with the memory's (``StatedError.names``), its fix the command it says to run; when it names
  no command (a prose fix), it is judged as what it says to do, but never helped when the error
  came back after the session did as it says;
- a preference, a decision or a pattern without an error (what to do): **helped** when the
  session did as it says (a successful call with what it prefers, none with what it rejects)
  and no correction contradicting it came after;
- any memory: **misled** when the user, after the agent acted on it, corrected it: a
  correction of a call made as the memory says, or words that prefer what it rejects or reject
  what it prefers (captured feedback, and the transcript's prompts);
- nothing otherwise. Most injections give no evidence, and none is invented: without a
  transcript (captures show no fix and no success) there is no verdict, only the count.

The counts and verdicts are written by ``admission.record_session_evidence`` (events that name
the session make a second memorize of it count nothing twice); memories that mostly mislead
retire (``admission.retire_misleading``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from .. import paths
from ..knowledge import admission
from ..knowledge.entries import Entry, get
from . import capture, injections
from .commands import command_core, command_key, only_inspects
from .corrections import PLAIN_WORDS
from .error_lines import normalize_error
from .tool_errors import tool_kind
from .transcript_model import (
    EDIT_TOOLS,
    ToolCall,
    base_name,
    command_of,
    error_line,
    failed,
    file_of,
    pair_key,
    succeeded,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .transcript import Transcript

KEY_CHARS = 300  # of an error line: memorize keeps this much of it in a memory's content
# the kinds of what the user says that can contradict a memory
_SAYING = ("correction", "preference", "rule", "decision")


@dataclass
class Judged:
    """One memory given to a session, as ``judge_session`` counted and judged it."""

    scope: str
    number: int
    verdict: str | None
    reason: str


def judge_session(
    session: str, folder: Path, root: Path, user_root: Path | None, transcript_path: str | None
) -> list[Judged]:
    """Count and judge every memory given to ``session`` (see the module docstring); project
    memories in the store under ``root``, the user's under ``user_root``."""
    given = injections.read(str(root), session)
    if not given:
        return []
    first: dict[tuple[str, int], dict] = {}
    last: dict[tuple[str, int], str] = {}
    for item in given:
        key = (str(item.get("scope") or "project"), item["id"])
        first.setdefault(key, item)
        last[key] = max(last.get(key, ""), str(item.get("at") or ""))
    from . import transcript as transcripts

    read = transcripts.read(transcript_path) if transcript_path else None
    said = [f for f in capture.read(folder / "feedback.jsonl") if f.get("type") == "feedback"]
    judged: list[Judged] = []
    for scope, store_root in (("project", root), ("user", user_root or paths.user_home())):
        keys = [key for key in first if key[0] == scope]
        if not keys or not paths.db_path(store_root).exists():
            continue
        from ..store import open_store

        with open_store(store_root) as store:
            uses = []
            for key in keys:
                entry = get(store, key[1])
                number = first[key].get("number")
                if entry is None or entry.scope != scope or number not in (None, entry.number):
                    continue  # not the memory that was given (forgotten, or another store)
                verdict, reason = _judged(entry, str(first[key].get("at") or ""), read, said)
                uses.append(admission.SessionUse(entry.id, last[key], verdict, reason))
                judged.append(Judged(scope, entry.number, verdict, reason))
            misled = admission.record_session_evidence(store, session, uses, store_root)
            admission.retire_misleading(store, misled, root=store_root)
    return judged


def _judged(
    entry: Entry, given_at: str, transcript: Transcript | None, said: list[dict]
) -> tuple[str | None, str]:
    """The verdict on one memory (None: no evidence), never raising: a shape of the session
    nobody expected gives no evidence, and the use is counted all the same."""
    start = epoch(given_at)
    if transcript is None or start is None:
        return None, ""
    try:
        return judge(entry, start, transcript, said)
    except Exception:  # noqa: BLE001 - a heuristic over the session must not lose its count
        return None, ""


def judge(
    entry: Entry, start: float, transcript: Transcript, said: list[dict]
) -> tuple[str | None, str]:
    """``helped``, ``misled`` or None, and why, for a memory given at ``start`` (epoch
    seconds) to the session of ``transcript`` (``said``: its captured feedback records)."""
    after = [c for c in transcript.calls if _after(c.timestamp, start) and c.completed]
    error_fix = error_and_fix(entry.content)
    stated = None if error_fix is not None else stated_error(entry)
    preferred, rejected = sides(entry.summary)
    if error_fix is not None:  # what it says to do is its fix
        preferred, rejected = fix_terms(error_fix[1]), set()
    elif stated is not None and stated.fix:
        preferred, rejected = fix_terms(stated.fix), set()
    corrected = _corrected(entry, after, transcript, said, preferred, rejected)
    if corrected:
        return "misled", corrected
    if error_fix is not None:
        line, fix = error_fix
        key = error_key(line)
        return _judge_error(lambda seen: error_key(seen) == key, fix, after, transcript)
    if stated is not None and stated.fix:
        return _judge_error(stated.names, stated.fix, after, transcript, read=True)
    if entry.kind == "observation" or not preferred:
        return None, ""
    done = [c for c in after if succeeded(c) and _follows(c, preferred, rejected)]
    if done and not any(rejected & call_terms(c) for c in after if _acts(c) and not c.rejected):
        if stated is not None and any(
            _recurs(c, stated.names) for c in after[after.index(done[0]) :]
        ):
            return None, ""  # the error it names came back after it was followed: not proven
        return "helped", f"the session did as it says: `{_shown(done[0])}`"
    return None, ""


# ------------------------------------------------------------------ errors and their fixes


def error_and_fix(content: str) -> tuple[str, str] | None:
    """The error line and the fix (``Fixed by:``, the command or ``Edited <path>: ...``) a
    memory of an error records, or None when it records no such pair."""
    line = fix = ""
    for text in content.splitlines():
        if text.startswith("Error: ") and not line:
            line = text[len("Error: ") :].strip()
        elif text.startswith("Fixed by: ") and not fix:
            fix = text[len("Fixed by: ") :].strip()
    return (line, fix) if line and fix else None


def error_key(line: str) -> str:
    """The key equal for recurrences of an error, from as much of its line as a memory keeps."""
    return normalize_error(line[:KEY_CHARS])


def _recurs(call: ToolCall, same: Callable[[str], bool]) -> bool:
    """Whether ``call`` failed with the error (``same`` of one of its error lines)."""
    lines = [signal.line for signal in call.errors] or [error_line(call)]
    return failed(call) and any(same(line) for line in lines)


def _edited(fix: str) -> str:
    """The path of an ``Edited <path>: <lines>`` fix, "" for any other."""
    return fix[len("Edited ") :].split(": ", 1)[0].strip() if fix.startswith("Edited ") else ""


def _command(text: str) -> str:
    return command_key(command_core(text)).strip()


def fix_ran(call: ToolCall, fix: str) -> bool:
    """Whether ``call`` carried out the fix a memory records: an edit of the same file, or the
    same command (as ``command_key`` compares commands)."""
    path = _edited(fix)
    if path:
        return call.name.lower() in EDIT_TOOLS and file_of(call) == path
    if tool_kind(call.name) != "bash":
        return False
    command = _command(fix)
    return bool(command) and _command(command_of(call)) == command


def fix_terms(fix: str) -> set[str]:
    """What a recorded fix names: the edited file's name, or the command's words."""
    path = _edited(fix)
    return code_terms(base_name(path)) if path else code_terms(_QUOTED.sub(" ", fix))


def same_fix(one: str, other: str) -> bool:
    """Whether two recorded fixes are the same change."""
    if _edited(one) or _edited(other):
        return _edited(one) == _edited(other)
    mine, theirs = _command(one), _command(other)
    return bool(mine) and mine == theirs or " ".join(one.split()) == " ".join(other.split())


def _extends(one: str, other: str) -> bool:
    """Whether one command is the other with more words after it (``pip install -e .`` and
    ``pip install -e``)."""
    mine, theirs = _command(one).split(), _command(other).split()
    short, long = sorted((mine, theirs), key=len)
    return bool(short) and long[: len(short)] == short


def _judge_error(
    same: Callable[[str], bool],
    fix: str,
    after: list[ToolCall],
    transcript: Transcript,
    read: bool = False,
) -> tuple[str | None, str]:
    """The verdict on a memory of an error (``same``: whether an error line is that error)
    and its fix (``read``: read from the memory's words, so a fix that only adds to it or
    leaves part of it out may be the same one: no verdict)."""
    recurred = [c for c in after if _recurs(c, same)]
    if not recurred:
        ran = next((c for c in after if succeeded(c) and fix_ran(c, fix)), None)
        if ran is None:
            return None, ""  # the session never came near it: no evidence
        return "helped", f"its fix ran (`{_shown(ran)}`) and the error did not come back"
    later = replace(transcript, calls=after)  # the part of the session after it was given
    for lesson in later.error_lessons():
        if not lesson.fix or not same(lesson.line):
            continue
        if same_fix(lesson.detail, fix):
            return "helped", "the error came back; its fix ran and the step then succeeded"
        if read and _extends(lesson.detail, fix):
            return None, ""
        return "misled", f"the error came back and another fix worked: {lesson.detail[:200]}"
    # no single fix in evidence: the memory's own fix still counts when it ran before success
    first = recurred[0]
    rest = after[after.index(first) + 1 :]
    step = pair_key(first)
    for n, call in enumerate(rest):
        if call.chain == first.chain and pair_key(call) == step and succeeded(call):
            if any(succeeded(c) and fix_ran(c, fix) for c in rest[: n + 1]):
                return "helped", "the error came back; its fix ran and the step then succeeded"
            break
    return None, ""


# ------------------------------------------------------------------ errors named in a memory's words

# a memory written by hand (``memory add``, MCP ``memory_store``, an import) names its error in
# its own words: "When `npm test` fails with Cannot find module x, run `npm install x`"
_WHEN = r"(?:when(?:ever)?|if|once|on)"
_FIX_INTRO = (
    r"(?:(?:the\s+)?(?:fix|solution|workaround|cure)(?:\s+is)?\s*[:=]?|"
    r"(?:is\s+)?(?:fixed|solved|resolved|cured)\s+(?:by|with)|fix\s+(?:it\s+)?(?:by|with))"
)
_STATED = [  # (error, fix) in the orders people write them; a comma first (errors hold colons)
    re.compile(rf"^\W*{_WHEN}\s+(?P<error>.+?),\s*(?P<fix>.+)$", re.I | re.S),
    re.compile(
        rf"^\W*{_WHEN}\s+(?P<error>.+?)(?:\s*[,;:]|\s+-+>|\s*\u2192|\s+[\u2014\u2013]|\s+then\b)"
        r"\s*(?P<fix>.+)$",
        re.I | re.S,
    ),
    re.compile(
        rf"^\W*(?P<fix>(?:run|execute)\b.+?)\s+{_WHEN}\s+(?P<error>.+)$",
        re.I | re.S,
    ),
    re.compile(
        rf"^(?P<error>.+?)(?:\s*[,;:.]\s*|\s+-+>\s*|\s*\u2192\s*|\s+[\u2014\u2013]\s+|\s+)"
        rf"{_FIX_INTRO}\s+(?P<fix>.+)$",
        re.I | re.S,
    ),
    re.compile(r"^(?P<error>.+?)(?:\s+-+>\s*|\s*\u2192\s*)(?P<fix>.+)$", re.S),
]
# words that say an error is meant ("fails with", "X error", "cannot", "ENOENT", "npm ERR!")
_NAMES_ERROR = re.compile(
    r"\bfail(?:s|ed|ing)?\b|error|exception\b|\bcannot\b|\bcan't\b|\bcould not\b|"
    r"\bunable to\b|\bnot found\b|\bno such\b|\bdenied\b|\brefused\b|(?-i:\bE[A-Z]{3,}\b)|"
    r"\bpanic|\bcrash|\btimed? ?out\b",
    re.I,
)
_RUN = re.compile(
    r"^(?:(?:then|just|first|simply|you\s+(?:need|have)\s+to|need\s+to)\s+)*"
    r"(?:run|running|execute|do|with|by)\s+",
    re.I,
)
_UNTIL = re.compile(
    r"(?<=\w)[.;!?](?:\s|$)|,\s|\s+(?:to|so|so that|because|since|which|first|again|before|after|"
    r"then|and then|instead|once)\b",
    re.I,
)
_NOT_A_PROGRAM = {"it", "the", "a", "an", "this", "that", "them", "these", "again", "all"}
_PROGRAM = re.compile(r"^[\w.@~+/-]{2,}$")
# of an error line, words that say nothing of which error it is
_GENERIC = PLAIN_WORDS | {
    "error", "fail", "failed", "failure", "exception", "fatal", "exit", "status", "code",
    "line", "warning", "err", "npm", "yarn", "pnpm", "see", "above", "more", "detail", "details",
}  # fmt: skip
_PATHLIKE = re.compile(r"\S*[/\\]\S*|\bhttps?:\S+")
_NAME_QUOTED = re.compile(r"'([^'\n]{2,120})'|\"([^\"\n]{2,120})\"|`([^`\n]{2,120})`")


@dataclass(frozen=True)
class StatedError:
    """The error a memory names in its own words (``words``: its distinctive words) and the
    command it says to run for it ("" when it names none)."""

    words: frozenset[str]
    fix: str

    def names(self, line: str) -> bool:
        """Whether an error line is this error: most of the line's distinctive words (three at
        least) are the memory's, and so is every name the line quotes (a module, a file): the
        same message about another module is another error."""
        mine = _error_words(line)
        shared = mine & self.words
        if len(shared) < 3 or 2 * len(shared) <= len(mine):
            return False
        quoted = ("".join(parts) for parts in _NAME_QUOTED.findall(line))
        return all(_error_words(name) <= self.words for name in quoted)


def _error_words(text: str) -> frozenset[str]:
    """The words of an error's text that tell it from other errors: not paths or URLs, not
    numbers, not the words every error has ("error", "failed")."""
    words = code_terms(_PATHLIKE.sub(" ", text))
    return frozenset(w for w in words if len(w) >= 3 and not w.isdigit() and w not in _GENERIC)


def stated_error(entry: Entry) -> StatedError | None:
    """The error a pattern or an observation names in its words (its summary, else its
    content), with the command it says to run; None when it names no error, or names one in
    too few words to tell it apart (then it is judged as what it says to do)."""
    if entry.kind not in ("pattern", "observation"):
        return None
    for text in (entry.summary, entry.content):
        found = _stated(" ".join(text.split())[:1000])
        if found is not None:
            return found
    return None


def _stated(text: str) -> StatedError | None:
    spans: list[str] = []

    def hide(match: re.Match[str]) -> str:  # a code span never splits a sentence
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    def shown(part: str) -> str:
        return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], part)

    masked = _CODE.sub(hide, text)
    for form in _STATED:
        match = form.match(masked)
        if match is None:
            continue
        error, fix = shown(match.group("error")), shown(match.group("fix"))
        words = _error_words(_CODE.sub(lambda m: m.group(1), _said_error(error)))
        if _NAMES_ERROR.search(error) and len(words) >= 2:
            return StatedError(words, _fix_command(fix))
    error = _said_error(text)
    if error != text and _NAMES_ERROR.search(text):  # "... fails with X." and no fix
        words = _error_words(_CODE.sub(lambda m: m.group(1), error))
        return StatedError(words, "") if len(words) >= 2 else None
    return None


_FAILS_WITH = re.compile(
    r"\b(?:fail(?:s|ed|ing)?|errors?|crash(?:es|ed)?|dies|exits?)\s+(?:with|on)\s+(.+?)"
    r"(?:[.;](?:\s|$)|,\s|$)",
    re.I,
)


def _said_error(text: str) -> str:
    """The error itself in a clause that names it: what follows "fails with", else all of it."""
    found = _FAILS_WITH.search(text)
    return found.group(1) if found else text


def _fix_command(text: str) -> str:
    """The command a memory's fix clause says to run ("run `npm ci` first" gives ``npm ci``),
    "" when it says something else (a prose instruction cannot be told from another fix)."""
    code = _CODE.search(text)
    if (
        code is not None
        and _RUN.match(text[: code.start()] + " ") is not None
        or (code is not None and code.start() == 0)
    ):
        command = code.group(1).strip()
    else:
        intro = _RUN.match(text)
        if intro is None:
            return ""
        rest = text[intro.end() :]
        cut = _UNTIL.search(rest)
        command = re.sub(r"(?<=\w)[.,;:!]+$", "", (rest[: cut.start()] if cut else rest).strip())
    words = command.split()
    if not words or len(words) > 16 or words[0].lower() in _NOT_A_PROGRAM:
        return ""
    return command if _PROGRAM.match(words[0]) else ""


# ------------------------------------------------------------------ what a memory says to do

_TOKEN = re.compile(r"[a-z0-9][a-z0-9_]*")
_CODE = re.compile(r"`([^`]+)`")
_NEGATED = re.compile(r"^\W*(?:don'?t|do not|never|avoid|stop|no longer)\b", re.I)
_OTHERWISE = re.compile(r",?\s+(?:not|instead of|rather than|over)\s+|,\s*never\s+", re.I)
_PLAIN = PLAIN_WORDS | {"no", "use", "using", "first", "before", "after", "fails", "always"}


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def code_terms(text: str) -> set[str]:
    """Every word of code (a command, a path), singular: ``npm ci`` gives npm and ci."""
    return {_singular(w) for w in _TOKEN.findall(text.lower()[:4000]) if len(w) >= 2}


def terms(text: str) -> set[str]:
    """The words of a memory's sentence that name something: all of its code (backticks),
    and its other words of three letters or more that are not plain words ("use", "the")."""
    code = set().union(*(code_terms(span) for span in _CODE.findall(text)))
    prose = _CODE.sub(" ", text)
    words = {w for w in _TOKEN.findall(prose.lower()[:4000]) if len(w) >= 3 and w not in _PLAIN}
    return code | {_singular(w) for w in words if _singular(w) not in _PLAIN}


def sides(text: str) -> tuple[set[str], set[str]]:
    """What a sentence prefers and what it rejects: "Use pnpm instead of npm" gives
    ({pnpm}, {npm}); "Never force-push to main" rejects everything it names."""
    if _NEGATED.match(text):
        return set(), terms(text)
    split = _OTHERWISE.search(text)
    if split is None:
        return terms(text), set()
    preferred = terms(text[: split.start()])
    return preferred, terms(text[split.end() :]) - preferred


_QUOTED = re.compile(r"<<.*|'[^']*'|\"[^\"]*\"", re.S)  # a heredoc, a quoted message


def call_terms(call: ToolCall) -> set[str]:
    """What a call names: a command's words (not what it quotes: a commit message says
    anything), or the tool and its file."""
    if tool_kind(call.name) == "bash":
        return code_terms(_QUOTED.sub(" ", command_of(call)))
    return code_terms(f"{call.name} {file_of(call)}")


def _acts(call: ToolCall) -> bool:
    """Whether a call does something (an edit, a command that runs or changes something), not
    only looks (a read, a search, ``ls``)."""
    if tool_kind(call.name) == "bash":
        return not only_inspects(command_of(call))
    return call.name.lower() in EDIT_TOOLS


def _follows(call: ToolCall, preferred: set[str], rejected: set[str]) -> bool:
    """Whether a call does what a memory prefers (at least half of its words) and nothing it
    rejects."""
    named = call_terms(call)
    return (
        bool(preferred)
        and _acts(call)
        and len(preferred & named) >= math.ceil(len(preferred) / 2)
        and not rejected & named
    )


def _restates(lesson: str, memory: str) -> bool:
    return " ".join(lesson.lower().split()).rstrip(".") == " ".join(memory.lower().split()).rstrip(
        "."
    )


def contradicts(lesson: str, memory: str, preferred: set[str], rejected: set[str]) -> bool:
    """Whether what the user said (``lesson``) goes against a memory: it rejects what the
    memory prefers, or prefers what the memory rejects. Saying the memory again does not."""
    if _restates(lesson, memory):
        return False
    theirs, against = sides(lesson)
    return bool(against & preferred or theirs & rejected)


def _corrected(
    entry: Entry,
    after: list[ToolCall],
    transcript: Transcript,
    said: list[dict],
    preferred: set[str],
    rejected: set[str],
) -> str:
    """Why the user corrected the memory after the agent acted on it ("" when they did not):
    a correction of a call made as the memory says, or words against it, said after the
    first call the agent made once the memory was given."""
    acted = next((epoch(c.timestamp) for c in after), None)
    if acted is None:
        return ""
    for correction in transcript.corrections():
        call = correction.corrected
        if call is not None and call in after and _follows(call, preferred, rejected):
            lesson = correction.feedback.lesson or correction.feedback.text or ""
            theirs, against = sides(lesson)
            if _restates(lesson, entry.summary) or theirs & preferred and not against & preferred:
                continue  # words that agree with the memory: about something else
            return f'the user corrected `{_shown(call)}`, done as it says: "{lesson[:160]}"'
    from .feedback import prompt_feedback

    spoken = [
        (str(item.get("lesson") or ""), epoch(item.get("at")))
        for item in said
        if item.get("kind") in _SAYING
    ]
    spoken += [
        (found.lesson, epoch(prompt.timestamp))
        for prompt in transcript.prompts
        if not prompt.sidechain and _after(prompt.timestamp, acted)
        for found in prompt_feedback(prompt.text)
        if found.kind in _SAYING
    ]
    for lesson, at in spoken:
        if (
            at is not None
            and at > acted
            and contradicts(lesson, entry.summary, preferred, rejected)
        ):
            return f'the user said otherwise: "{lesson[:160]}"'
    return ""


# ------------------------------------------------------------------ time and display


def epoch(stamp: object) -> float | None:
    """An ISO 8601 stamp (a transcript's, the injection log's) as epoch seconds, None if not
    one."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _after(stamp: object, start: float) -> bool:
    moment = epoch(stamp)
    return moment is not None and moment > start


def _shown(call: ToolCall) -> str:
    text = command_of(call) or f"{call.name} {file_of(call)}".strip()
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:79].rstrip() + "\u2026"
