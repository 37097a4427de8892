"""Why an error happened, in the agent's own words: the diagnosis it wrote between a failure
and the change that fixed it ("This system message has a `content` field instead of a
`message` field").

An error lesson's summary names the error and the fix; the cause is what lets a later session
recognise the same mistake in other code, and agents state it as they work. Only sentences
written after the failure and before the fix count (the fix then proved them), only ones that
explain (a cue such as "because", "instead of", "should be", "the issue is"), and only ones
that name something concrete (backticked text, an identifier, a file): "I see the issue." or
"Let me check the models" say nothing a memory could use.
"""

from __future__ import annotations

import re

from .conclusions import plain

CAUSE_MAX = 300  # characters of diagnosis kept in a memory's content

_CUE = re.compile(
    r"\b(?:the (?:real |root )?(?:issue|problem|bug|cause|culprit|error) (?:is|was)\b|"
    r"root cause|because|instead of|rather than|should be|should have been|"
    r"caused by|due to|expects?\b|expected\b|is missing|was missing|no longer|"
    r"(?:is|was|are|were)n't|(?:does|did)n't|not (?:a|an|the)\b|never\b)",
    re.I,
)
# plans and narration, not findings
_PLAN = re.compile(
    r"^(?:let me|let's|i'll|i will|i need to|now (?:let me|i)|next,? |first,? |"
    r"perfect|great|excellent|good|okay|ok\b)",
    re.I,
)
# something a later session could search for: backticked text, snake_case, dotted or
# CamelCase names, a file
_CONCRETE = re.compile(
    r"`[^`\n]+`|\b\w+_\w+\b|\b[A-Za-z]\w*\.\w+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(])")


def diagnosis(texts: list, after: int, before: int, chain: str) -> str:
    """The agent's explaining sentences written between index ``after`` (the failure) and
    ``before`` (the fix), in order, at most ``CAUSE_MAX`` characters, the ones nearest the
    fix first kept (earlier ones are more often a hypothesis it dropped); "" when none."""
    chosen: list[str] = []
    for text in texts:
        if text.chain != chain or not after < text.index < before:
            continue
        for line in text.text.splitlines():
            line = plain(line.strip().lstrip("#>-*+ ").strip())
            for sentence in _SENTENCE_END.split(line):
                sentence = sentence.strip()
                if (
                    len(sentence.split()) >= 5
                    and sentence.count("`") % 2 == 0
                    and _CUE.search(sentence)
                    and _CONCRETE.search(sentence)
                    and not _PLAN.match(sentence)
                    and sentence not in chosen
                ):
                    chosen.append(sentence)
    kept: list[str] = []
    for sentence in reversed(chosen):
        if len(" ".join([sentence, *kept])) > CAUSE_MAX:
            break
        kept.insert(0, sentence)
    return " ".join(kept)
