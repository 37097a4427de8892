"""Why something went wrong, in the agent's own words: the diagnosis it wrote before changing
the code ("I see the issue. This system message has a `content` field instead of a `message`
field").

An error lesson's summary names the error and the fix; the cause is what lets a later session
recognise the same mistake in other code, and agents state it as they work. A sentence counts
as a diagnosis when it follows an opener ("I see the issue", "Now I understand", "Found the
bug") or explains by itself (a cue such as "because", "instead of", "should be", "the issue is
that"), and names something concrete (backticked text, an identifier, a file): "I see the
issue." alone, "Let me check the models" or "it is not configured properly" say nothing a
memory could use. A sentence that ends with a colon brings the list items under it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .conclusions import blocks, plain
from .conclusions import sentence as first_sentence

CAUSE_MAX = 300  # characters of diagnosis kept in an error lesson's content
DETAIL_MAX = 600  # characters of a diagnosis with its list items
SUMMARY_MAX = 120

_CUE = re.compile(
    r"\b(?:the (?:real |root |actual )?(?:issue|problem|bug|cause|culprit|error) (?:is|was)\b|"
    r"root cause|because|instead of|rather than|should be|should have been|"
    r"caused by|due to|expects?\b|expected\b|is missing|was missing|no longer|"
    r"(?:is|was|are|were)n't|(?:does|did)n't|(?:can't|cannot)\b|not being\b|"
    r"only (?:accepts?|allows?|supports?)\b|not (?:a|an|the)\b|never\b)",
    re.I,
)
# "I see the issue", "Now I understand the full picture", "Found the bug!", "There's the bug",
# "The issue is clear": what follows is the diagnosis
_OPENER = re.compile(
    r"^(?:(?:ok(?:ay)?|ah|aha|great|perfect|good|excellent|so|now|yes)[,!.]?\s+)*"
    r"(?:(?:now\s+)?i\s+(?:can\s+)?(?:see|understand|found|get)(?:\s+it)?(?:\s+now)?"
    r"(?:\s+(?:the|what)\b[^.!?:]{0,30})?|found\s+(?:it|the\s+\w+)|there'?s\s+the\s+\w+|"
    r"(?:the|this)\s+(?:real\s+|root\s+|actual\s+)?(?:issue|problem|bug|cause)\s+is\s+clear)"
    r"\s*[.!:]*$",
    re.I,
)
# plans and narration, not findings
_PLAN = re.compile(
    r"^(?:let me|let's|i'll|i will|i need to|i'm going to|now (?:let me|i)|next,? |first,? |"
    r"perfect|great|excellent|good|okay|ok\b)",
    re.I,
)
# something a later session could search for: backticked text, snake_case, dotted or
# CamelCase names, a file
_CONCRETE = re.compile(
    r"`[^`\n]+`|\b\w+_\w+\b|\b[A-Za-z]\w*\.\w+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(])")
_SEE_THAT = re.compile(
    r"^(?:(?:ok(?:ay)?|ah|aha|so|now|wait)[,!.]?\s+)*"
    r"(?:i (?:can )?(?:now )?(?:see|found|notice|noticed|realized?|realised?)|(?:it )?turns out),?\s+"
    r"that\s+",
    re.I,
)
_DASH = re.compile(r"\s+[-\u2014\u2013]\s+|:\s+")  # "I see the issue - Hatchling needs ..."


@dataclass
class Explanation:
    sentence: str  # one whole sentence
    opened: bool  # it follows an opener: the agent says this is what it found
    items: list[str]  # the list items under a sentence that ends with a colon

    @property
    def detail(self) -> str:
        """The sentence with its list items, at most ``DETAIL_MAX`` characters."""
        out = self.sentence
        for item in self.items:
            joined = f"{out} {item};" if out.endswith((":", ";")) else f"{out}; {item};"
            if len(joined) > DETAIL_MAX:
                break
            out = joined
        return out.rstrip(";") + ("." if out.endswith(";") else "")


def explanations(text: str) -> list[Explanation]:
    """The sentences of an agent's text block that explain something concrete, in order."""
    out: list[Explanation] = []
    opened = False
    parts = blocks(text)
    for at, block in enumerate(parts):
        if block.kind not in ("para", "item"):
            opened = opened and block.kind == "blank"
            continue
        for sentence, announced in _sentences(plain(block.text)):
            if _OPENER.match(sentence):
                opened = True
                continue
            opened = opened or announced
            if (
                len(sentence.split()) >= 5
                and sentence.count("`") % 2 == 0
                and (opened or _CUE.search(sentence))
                and _CONCRETE.search(sentence)
                and not _PLAN.match(sentence)
                and all(sentence != known.sentence for known in out)
            ):
                items = _items_after(parts, at) if sentence.endswith(":") else []
                out.append(Explanation(sentence, opened, items))
            opened = False
    return out


def _sentences(paragraph: str) -> list[tuple[str, bool]]:
    """The sentences of a paragraph, each with whether an opener in the same sentence
    announced it ("I see the issue - Hatchling needs ...", "I see that `f` is still used")."""
    out = []
    for sentence in _SENTENCE_END.split(paragraph):
        sentence = sentence.strip()
        rest = _announced(sentence)
        if rest:
            out.append((rest[:1].upper() + rest[1:], True))
        elif sentence:
            out.append((sentence, False))
    return out


def _announced(sentence: str) -> str:
    """What follows an opener inside ``sentence``; "" when it has none."""
    match = _SEE_THAT.match(sentence)
    if match:
        return sentence[match.end() :].strip()
    match = _DASH.search(sentence)
    if match and _OPENER.match(sentence[: match.start()]):
        return sentence[match.end() :].strip()
    return ""


def _items_after(parts: list, at: int) -> list[str]:
    items, k = [], at + 1
    while k < len(parts) and parts[k].kind in ("blank", "item"):
        if parts[k].kind == "item":
            items.append(plain(parts[k].text).rstrip(".;"))
        k += 1
    return items


def diagnosis(texts: list, after: int, before: int, chain: str) -> str:
    """The agent's explaining sentences written between index ``after`` (the failure) and
    ``before`` (the fix), in order, at most ``CAUSE_MAX`` characters, the ones nearest the
    fix first kept (earlier ones are more often a hypothesis it dropped); "" when none."""
    chosen: list[str] = []
    for text in texts:
        if text.chain != chain or not after < text.index < before:
            continue
        for explained in explanations(text.text):
            if explained.sentence not in chosen:
                chosen.append(explained.sentence)
    kept: list[str] = []
    for sentence in reversed(chosen):
        if len(" ".join([sentence, *kept])) > CAUSE_MAX:
            break
        kept.insert(0, sentence)
    return " ".join(kept)


_CLAUSE = re.compile(r",\s+(?:and|but|which|so|while)\s+")
_CODE = re.compile(r"(`[^`]*`)")
# ways to say the same in fewer words, tried in turn until the sentence fits
_ASIDE = re.compile(r"\s*\([^()]*\)")  # an aside in parentheses
_SHORTER = (
    (_ASIDE, ""),
    (re.compile(r"\b(?:simply|actually|basically|currently|just) ", re.I), ""),
    (  # "The current implementation of `f`" is `f`
        re.compile(
            r"^the (?:current |existing )?(?:implementation|definition|code) of (`[^`]+`)", re.I
        ),
        r"\1",
    ),
    (  # "The `f` function" is `f`
        re.compile(
            r"^the (`[^`]+`) (?:function|method|class|module|field|property|attribute|"
            r"variable|file|macro|component)\b",
            re.I,
        ),
        r"\1",
    ),
)


def first_cause(cause: str) -> str:
    """The first sentence of a ``diagnosis``."""
    return _SENTENCE_END.split(cause, 1)[0]


def in_brief(text: str) -> str:
    """The diagnosis as a whole sentence of at most 120 characters (said in fewer words when
    it is longer, never cut), or its first clause; "" when neither fits."""
    text = text.rstrip(":;, ").rstrip(".") + "."
    for pattern, shorter in _SHORTER:
        if len(text) <= SUMMARY_MAX:
            return text
        if pattern is _ASIDE:  # code in backticks keeps its parentheses: `.?(c|m)[jt]s?(x)`
            parts = _CODE.split(text)
            text = "".join(p if i % 2 else pattern.sub(shorter, p) for i, p in enumerate(parts))
        else:
            text = pattern.sub(shorter, text)
    if len(text) <= SUMMARY_MAX:
        return text
    clause = _CLAUSE.split(text, 1)[0]  # "`f()` returns a record, and it has ..."
    if clause != text and len(clause) < SUMMARY_MAX and len(clause.split()) >= 4:
        return clause + "."
    return first_sentence(text, SUMMARY_MAX)
