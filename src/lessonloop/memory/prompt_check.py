"""A prompt's intent and its vague spots, for the prompt hook's check (``prompt_check``).

Standard library only: the hook calls it on every prompt.
"""

from __future__ import annotations

import re

from ..lazyre import lazy as _lazy
from .phrasing import CODE_FENCE, QUESTION_START, words_of

__all__ = ["prompt_check"]


_INTENTS = [
    (
        "test",
        r"\b(?:write|add|create|generate|run|rerun|re-run|fix)\s+(?:(?:a|an|the|some|more|unit|"
        r"integration|e2e|failing|missing)\s+){0,3}tests?\b|\btest coverage\b|\bunit tests?\b|"
        r"\bcoverage\b|\bpytest\b|\bjest\b|\bvitest\b|\btest suite\b|\bspecs?\b",
    ),
    (
        "review",
        r"\breview\b|\blook over\b|\bcode review\b|\baudit\b|\bcritique\b|\bfeedback on\b|"
        r"\bcheck (?:my|this|the) (?:code|pr|diff|changes|implementation)\b|\bsanity[- ]check\b",
    ),
    (
        "refactor",
        r"\brefactor\w*|\bclean(?:\s|-)?up\b|\brestructur\w+|\brename\b|\bsimplif\w+|"
        r"\breorgani[sz]\w+|\bextract\b|\btidy\b|\bdeduplicate\b|\bdry up\b|\bmodulari[sz]e\b",
    ),
    (
        "fix",
        r"\bfix\w*|\bbugs?\b|\bbroken\b|\berrors?\b|\bfail\w*|\bcrash\w*|\bdoesn'?t work\b|"
        r"\bnot working\b|\bdebug\w*|\brepair\b|\bresolve\b|\bexception\b|\btraceback\b|\bissue\b",
    ),
    (
        "explain",
        r"\bexplain\w*|\bwhat (?:does|is|are|do)\b|\bhow (?:does|do|is|can|would)\b|"
        r"\bwhy (?:does|do|is|are|did)\b|\bunderstand\b|\bwalk me through\b|\bdescribe\b|"
        r"\btell me (?:about|how|why|what)\b|\bwhat's\b",
    ),
    (
        "build",
        r"\badd\b|\bcreate\b|\bimplement\w*|\bbuild\b|\bwrite\b|\bgenerate\b|\bscaffold\b|"
        r"\bset ?up\b|\bnew (?:feature|endpoint|page|component|command)\b|\bsupport for\b|"
        r"\bmake (?:a|an|the|new)\b|\bintegrate\b",
    ),
]
_INTENT_RES = [(name, _lazy(p, re.I)) for name, p in _INTENTS]
_ORDER = {name: i for i, (name, _) in enumerate(_INTENTS)}
_VAGUE = [
    (
        "make it better",
        _lazy(
            r"\b(?:make|get) (?:it|this|that|things) (?:better|nicer|cleaner|"
            r"good|great|faster|work|right|prettier)\b|\bimprove (?:it|this|that|"
            r"things)\b(?!\s+by)",
            re.I,
        ),
    ),
    ("fix it", _lazy(r"\bfix (?:it|this|that|things|everything|stuff)\b", re.I)),
    (
        "doesn't work",
        _lazy(
            r"\b(?:it|this|that)\s+(?:doesn'?t|does not|isn'?t|is not)\s+"
            r"work(?:ing)?\b|\bnot working\b|\b(?:it'?s|is) broken\b",
            re.I,
        ),
    ),
    (
        "etc",
        _lazy(
            r"\betc\b\.?|\band so on\b|\band so forth\b|\bor whatever\b|"
            r"\bstuff like that\b|\band stuff\b",
            re.I,
        ),
    ),
    ("somehow", _lazy(r"\bsomehow\b", re.I)),
    ("something", _lazy(r"\bsomething\b|\bsome kind of\b|\bsomewhere\b", re.I)),
]
_DETAIL = _lazy(
    r"`|\"|'[^'\s]+'|\w+\.\w{1,5}\b|[\w-]+/[\w./-]+|\b\w+(?:Error|Exception)\b|\b[a-z]+_[a-z_]+\b|"
    r"\b[a-z]+[A-Z]\w+\b|\b\d{2,}\b|(?i:\b(?:line|test|function|method|class|file|endpoint|page|"
    r"button|module|command|error|exception|traceback|message|returns?|shows?|says|expected|"
    r"instead|when|after|because)\b)"
)
_SHORT_OK = _lazy(
    r"^(?:/\S+.*|y|n|yes|no|ok|okay|sure|continue|go ahead|go on|proceed|"
    r"thanks|thank you|commit|push|lgtm|stop|undo|retry|done|next)[\s.!]*$",
    re.I,
)


def prompt_check(prompt: str) -> dict:
    """{"intent": fix|build|explain|refactor|test|review|question|other, "vague": [...]}.

    The intent is the one whose keyword comes first in the prompt (a longer match wins a tie);
    a prompt with none is a ``question`` when it asks something, else ``other``. Vague signals
    are fixed labels: "make it better", "fix it", "doesn't work" (these three only without
    details), "etc", "somehow", "something", "short prompt".
    """
    try:
        return _prompt_check(prompt)
    except Exception:  # noqa: BLE001
        return {"intent": "other", "vague": []}


def _prompt_check(prompt: str) -> dict:
    text = prompt if isinstance(prompt, str) else ""
    text = CODE_FENCE.sub(" ", text[:20_000]).strip()
    best = None
    for name, pattern in _INTENT_RES:
        m = pattern.search(text)
        if m:
            key = (m.start(), -(m.end() - m.start()), _ORDER[name])
            if best is None or key < best[0]:
                best = (key, name)
    if best is not None:
        intent = best[1]
    elif (
        text.rstrip().endswith("?")
        or QUESTION_START.match(text)
        or re.match(r"^(?:can|could)\b", text, re.I)
    ):
        intent = "question"
    else:
        intent = "other"
    vague: list[str] = []
    words = words_of(text)
    for label, pattern in _VAGUE:
        m = pattern.search(text)
        if not m:
            continue
        if label in ("fix it", "doesn't work", "make it better"):
            rest = text[: m.start()] + " " + text[m.end() :]
            if _DETAIL.search(rest) and len(words_of(rest)) > 3:
                continue
        vague.append(label)
    if len(words) < 4 and text and not _SHORT_OK.match(text) and "short prompt" not in vague:
        vague.append("short prompt")
    return {"intent": intent, "vague": vague}
