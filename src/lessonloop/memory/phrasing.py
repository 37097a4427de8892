"""How a prompt is read into sentences and how a lesson is worded.

The vocabulary (the verbs an instruction starts with, auxiliaries, pronouns, determiners,
objects that only make sense in the conversation), quoted and code text masked behind
placeholders (``mask_quoted``/``unmask_quoted``), a prompt's sentences without code blocks, tags,
quoted lines and pasted logs (``prompt_sentences``), whether a clause reads as an instruction
(``imperative``) and a lesson's final form (``finish_lesson``: capitalised, "Use A, not B", at
most LESSON_MAX characters, cut at a clause, never mid-sentence).
"""

from __future__ import annotations

import re

from ..lazyre import lazy as _lazy
from .error_lines import BARE_EXCEPTION_LINE, EXCEPTION_LINE

__all__ = [
    "AUX",
    "CODE_FENCE",
    "DEICTIC",
    "DETERMINERS",
    "LESSON_MAX",
    "PLACEHOLDER",
    "PLACEHOLDER_CLOSE",
    "PLACEHOLDER_OPEN",
    "PRONOUN_ONLY",
    "QUESTION_START",
    "VERBS",
    "finish_lesson",
    "gerund_base",
    "imperative",
    "mask_quoted",
    "prompt_sentences",
    "unmask_quoted",
    "words_of",
]


LESSON_MAX = 120  # Feedback.lesson

# Verbs an instruction may start with (base forms). A sentence after "always", "never",
# "don't", "from now on", a correction marker... must start with one of them: "the test always
# fails", "never mind", "don't worry" and "from now on it gets harder" are not lessons.
VERBS = frozenset(
    """
use run add write put keep check make call avoid commit push pull test format lint ask include
update create read prefer name import export install pin wrap return raise log document comment
annotate sort split merge rebase squash tag deploy build compile validate escape quote indent
align handle catch throw mock stub patch cache store save load delete remove drop rename move copy
clean refactor reuse extract inline declare define initialize initialise set configure prefix
suffix start end finish close lock sign verify review explain mention reference link cite confirm
wait retry rerun re-run print show output respond reply answer stick go switch follow stay try
limit cap bump upgrade downgrade guard assert expose hide default treat give list group batch
sanitize sanitise redact strip trim normalize normalise convert encode decode serialize parse
benchmark profile measure specify target pass send emit leave touch edit modify change replace be
stage favour favor minimize minimise pick choose select enable disable place separate combine
double-check back type prompt recheck re-read reread open cd activate source seed migrate
generate regenerate scaffold break fix debug spell capitalize lowercase uppercase prepend append
delegate mark label bundle vendor fork clone fetch sync ship release publish announce notify
report tell summarize summarise describe stop create wire gate isolate mutate require echo force
share leak hardcode hard-code skip ignore silence suppress swallow disable bypass amend reset
upload download post reuse memoize iterate loop block await paginate retry throttle
hand let derive point route inject restart reinstall rebuild recreate reload relaunch launch kill
coauthor co-author credit attribute
""".split()
)
AUX = frozenset(
    """is are was were be been being has have had will would can could should shall
may might must does did do 's seems looks feels sounds gets got""".split()
)
PRONOUN_ONLY = frozenset(
    """it this that them these those anything something everything nothing
so too again now then here there me us him her one ones stuff things thing else myself
yourself""".split()
)
# objects that only make sense in the conversation ("option 2", "the first one", "the plan")
DEICTIC = _lazy(
    r"^(?:(?:the|your|my|our|this|that)\s+)?(?:first|second|third|last|latter|former|previous|"
    r"original|other|current|same|plan|flow|option|version|approach|one|idea|suggestion|proposal|"
    r"solution|way|thing|answer|result|change|fix)\b|^(?:option|version|approach|choice|number|"
    r"plan|variant|v)\s*\w?\d*\b\W*$|^[a-c1-9]\W*$",
    re.I,
)

PLACEHOLDER_OPEN, PLACEHOLDER_CLOSE = "\ue000", "\ue001"
PLACEHOLDER = _lazy(PLACEHOLDER_OPEN + r"(\d+)" + PLACEHOLDER_CLOSE)
_TAG_BLOCK = _lazy(r"<([A-Za-z][\w-]*)(?:\s[^>]*)?>.*?</\1\s*>", re.S)
CODE_FENCE = _lazy(r"(?:^|\n)[ \t]*(```|~~~)[^\n]*\n.*?(?:\n[ \t]*\1[^\n]*(?=\n|$)|$)", re.S)
_MASK = _lazy(
    r"`[^`\n]{1,400}`"
    r"|(?<![\w/])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s,;'\"`<>]{0,400}[^\s,;'\"`<>.)]"  # a URL: one word
    r"|(?<![\w\"])\"[^\"\n]{1,400}\"(?![\w])"
    r"|\u201c[^\u201d\n]{1,400}\u201d|\u2018[^\u2019\n]{1,400}\u2019"
    r"|(?<![\w'])'[^'\n]{1,200}'(?![\w'])"
)
_PASTED = _lazy(
    r"^(?:[ ]{4,}|\t|\s*>|\s*\$ |\s*>>> |\s*\.\.\. |\s*#!|\s*\|"
    r"|\s*(?:Traceback \(|File \"|at \S+[ (]|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}:\d{2}|\[\d"
    r"|\[(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL)\]"
    r"|(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL)\b"
    r"|npm (?:ERR!|error|warn)|E\s{2,}|[\w./-]+\.\w+:\d+"
    r"|(?:def|class|function|import|from\s+\S+\s+import|#include|package|const|var|public|private"
    r"|protected|fn|func|SELECT|INSERT|UPDATE|CREATE)\s))"
)
_CODE_LINE = _lazy(
    r"(?:[{};]\s*$|=>|\(\);|\)\s*\{|^\s*[}\])]|^\s*#\s*\w+\s*=|^\s*\w+\s*=\s*\S+;?$)"
)
_SENTENCE_SPLIT = _lazy(r"(?<=[.!?])\s+(?=\S)|\s*\n+\s*")
_BULLET = _lazy(r"^\s*(?:[-*\u2022+]|\d{1,2}[.)])\s+")
_TRAIL = _lazy(
    r"(?:[\s,;:]*(?:please|pls|thanks|thank you|thx|ok|okay|ty))*[\s.!;:,\u2014\u2013-]*$", re.I
)

QUESTION_START = _lazy(
    r"^(?:should|shall|do(?!\s+not\b|n't|nt\b)|does|did|is|are|was|were|why|how|what|where|which|"
    r"who|whom|whose|would|will|am|isn't|aren't|doesn't|didn't|wouldn't|won't|can't|shouldn't|"
    r"have you|has|any idea|is there|are there)\b",
    re.I,
)

_NOT_B = _lazy(
    r"^(Use|Prefer|Keep|Go with|Stick with|Choose|Pick)\s+(.+?)(?<![,\s])\s+not\s+"
    r"(?!(?:be|to|just|only|the\s+other)\b)(.+)$",
    re.S,
)
_AUX_BEFORE_NOT = _lazy(
    r"\b(?:is|are|was|were|do|does|did|should|must|can|will|would|it's|"
    r"that's|could)\s*$",
    re.I,
)
_WORD = _lazy(r"[\w'\-" + PLACEHOLDER_OPEN + PLACEHOLDER_CLOSE + r"]+")


def mask_quoted(text: str) -> tuple[str, list[str]]:
    saved: list[str] = []

    def keep(m: re.Match) -> str:
        saved.append(m.group(0))
        return f"{PLACEHOLDER_OPEN}{len(saved) - 1}{PLACEHOLDER_CLOSE}"

    return _MASK.sub(keep, text), saved


def unmask_quoted(text: str, saved: list[str]) -> str:
    if PLACEHOLDER_OPEN not in text:
        return text
    return PLACEHOLDER.sub(
        lambda m: saved[int(m.group(1))] if int(m.group(1)) < len(saved) else "", text
    )


def prompt_sentences(text: str) -> list[str]:
    """Sentences of a prompt: code blocks, tags, quoted lines and pasted logs removed."""
    text = _TAG_BLOCK.sub("\n", text)
    text = CODE_FENCE.sub("\n", text)
    out = []
    for line in text.split("\n"):
        if (
            not line.strip()
            or _PASTED.match(line)
            or _CODE_LINE.search(line)
            or EXCEPTION_LINE.match(line.strip())
            and not BARE_EXCEPTION_LINE.match(line.strip())
        ):
            continue
        line = _BULLET.sub("", line)
        for sentence in _SENTENCE_SPLIT.split(line):
            out.extend(_clauses(sentence))
    return out


_ASIDE = re.compile(r"\s*\(([^()\n]{8,240})\)")
_ASIDE_LEAD = re.compile(r"^(?:but|and|or|also|though)\s+", re.I)


def _clauses(sentence: str) -> list[str]:
    """A sentence, then each aside in it that is a clause (three words or more) as a sentence
    of its own: a task often states its rules there ("Create a library (no Python bindings
    needed)", "(but keep the Justfile)"); "(uuid.NewV7)" stays only in its sentence."""
    main = sentence.strip()
    asides = [_ASIDE_LEAD.sub("", m.group(1).strip()) for m in _ASIDE.finditer(main)]
    return ([main] if main else []) + [aside for aside in asides if len(aside.split()) >= 3]


def words_of(text: str) -> list[str]:
    return _WORD.findall(text)


def imperative(rest: str) -> str | None:
    """``rest`` when it reads as an instruction ("run the tests first"), else None."""
    rest = rest.strip(" \t,:;\u2014\u2013-")
    words = words_of(rest)
    if len(words) < 2:
        return None
    first = words[0].lower()
    if first not in VERBS and not any(part in VERBS for part in first.split("-")):
        return None
    second = words[1].lower()
    if second in AUX or second.endswith("'s") and second != "let's":
        return None
    if first == "let" and second == "me":
        return None  # "let me check the exclude file": the speaker's own next step
    content = [w for w in words[1:] if w.lower() not in PRONOUN_ONLY]
    if not content or second in ("that", "this", "those", "these") and len(words) <= 3:
        return None  # "delete that file": only meaningful in the conversation
    if any(w.lower() in ("myself", "yourself") for w in words):
        return None  # what the user does, not an instruction
    return rest


def gerund_base(word: str) -> str | None:
    w = word.lower()
    if not w.endswith("ing") or len(w) < 5:
        return None
    stem = w[:-3]
    for cand in (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else None):
        if cand and cand in VERBS:
            return cand
    return None


def finish_lesson(lesson: str, saved: list[str]) -> str:
    lesson = unmask_quoted(lesson, saved)
    lesson = _TRAIL.sub("", lesson.strip())
    lesson = re.sub(r"\s+", " ", lesson).strip()
    if not lesson:
        return ""
    lesson = lesson[0].upper() + lesson[1:]
    m = _NOT_B.match(lesson)
    if m and not _AUX_BEFORE_NOT.search(m.group(2)):
        lesson = f"{m.group(1)} {m.group(2)}, not {m.group(3)}"
    if len(lesson) > LESSON_MAX:  # a whole clause, never a cut mid-sentence with "…"
        cuts = [
            m.start()
            for m in re.finditer(r"[,;:]\s|\s[\u2014\u2013-]\s", lesson)
            if 40 <= m.start() <= LESSON_MAX
        ]
        lesson = lesson[: cuts[-1]].rstrip(" ,;:-") if cuts else ""
    return lesson


DETERMINERS = frozenset("the this that these those its my your his her their a an".split())
