"""What the user said that is worth keeping (``prompt_feedback``).

A prompt becomes lessons stated as instructions ("Use pnpm instead of npm"; "don't use npm, use
pnpm" → "Use pnpm, not npm"), never the trigger phrase ("I prefer"), one instruction each:
corrections (a bare "that's wrong" takes the instruction after it), confirmations, preferences,
rules, decisions, labelled rules ("Hard rule in this repo: ..."), constraints the user found ("X
is not supported by Chrome") and facts they state ("the v3 upgrade is already done"). Precision
over recall: questions, quoted and code text, pasted logs, hedged, conditional and one-off ("for
now") sentences give nothing. The prompt is redacted before it is read. The hook calls this on
every prompt: standard library only, never raising.
"""

from __future__ import annotations

import re
from collections import namedtuple

from ..lazyre import lazy as _lazy
from .feedback_rules import DASH_CLAUSE, FROM_NOW, WHENEVER, classify_sentence
from .lesson_forms import CLAUSE_CUT, decision_lesson
from .phrasing import (
    DEICTIC,
    DETERMINERS,
    LESSON_MAX,
    PLACEHOLDER,
    PLACEHOLDER_CLOSE,
    PLACEHOLDER_OPEN,
    PRONOUN_ONLY,
    QUESTION_START,
    finish_lesson,
    imperative,
    mask_quoted,
    prompt_sentences,
    unmask_quoted,
    words_of,
)
from .secret_free import redact
from .text_limits import cap_text

__all__ = ["Feedback", "TEXT_MAX", "prompt_feedback"]


TEXT_MAX = 300  # Feedback.text

_PROMPT_MAX = 50_000  # characters of a prompt analysed (after redaction)

# a named tuple, not a dataclass: importing dataclasses costs a hook ~10 ms
Feedback = namedtuple("Feedback", "kind lesson text user_scope")

_LEAD = _lazy(
    r"^(?:(?:ok(?:ay)?|so|and|also|oh|hey|btw|by the way|alright|well|one more thing|ugh|argh|sigh|"
    r"uh|um|whoa|oof|"
    r"note|important|fyi|reminder|pls|please|just|and also|oh and|general rule|rule|"
    r"as a rule|in general)\b[\s,:!.\u2014\u2013-]*)+",
    re.I,
)
_MARKER = _lazy(
    r"^(?:(?:(?:no(?:\s+no)*|nope|nah|wrong|incorrect|actually|wait|hmm+|instead|not like that|not quite|"
    r"that's not it|that is not it)\s*(?:[,.!:;\u2014\u2013]|\s-)+\s*)"
    r"|(?:(?:that|this|it)(?:'s| is| was) (?:(?:all|totally|completely) )?(?:wrong|incorrect|not right|"
    r"not correct|not what i (?:asked|wanted|meant|said)(?: for)?)"
    r"|you (?:got it wrong|misunderstood|broke (?:it|this|that))|wrong (?:file|approach|way))"
    r"(?:\s*(?:[,.!:;\u2014\u2013]|\s-)+\s*|\s*$))+",
    re.I,
)

_HEDGE = _lazy(
    r"^(?:if|when|unless|maybe|perhaps|probably|possibly|i think|i guess|i wonder|i'm not sure|"
    r"not sure|it seems|apparently|in case|although|though|even if|i suppose|i believe|"
    r"i don't know|i'm wondering|i was wondering|hopefully|ideally)\b",
    re.I,
)
_ONE_OFF = _lazy(
    r"\b(?:for now|right now|this time|for the moment|temporarily|just this once|for this "
    r"(?:one|task|pr|commit|change|file|test|run)|today|yet|in this (?:function|file|test)|"
    r"until)\b",
    re.I,
)
_CONFIRM_PHRASE = (
    r"(?:perfect(?:ly)?|exactly(?: right| what i (?:wanted|needed|meant|asked for))?|"
    r"(?:that|this|it)(?:'s| is) (?:exactly |just |absolutely )?(?:right|correct|it|perfect|"
    r"what i (?:wanted|needed|meant|asked for)|much better|great|good|fine)|"
    r"(?:that|this|it|everything|all) works(?: now| perfectly| great| fine| well)?|"
    r"works (?:now|perfectly|great)|(?:that|this|it)(?: now)? looks (?:good|great|perfect|right)|"
    r"looks (?:good|great|perfect|right)(?: to me)?|lgtm|spot on|nailed it|well done|"
    r"good job|great job|nice work|great work|correct|bingo|you got it|that did it|"
    r"that fixed it|fixed(?: it)?|yes,? exactly|exactly that|much better)"
)
_CONFIRM = _lazy(
    r"^(?:(?:ok(?:ay)?|yes|yep|yeah|yup|great|nice|awesome|cool|thanks|thank you|wow|excellent|"
    r"amazing|sweet|good|right)[\s,!.\u2014\u2013-]+)*"
    + _CONFIRM_PHRASE
    + r"(?:[\s,!.\u2014\u2013-]+(?:"
    + _CONFIRM_PHRASE
    + r"|thanks|thank you|thx|great|nice|"
    r"awesome|now|!))*[\s,!.]*$",
    re.I,
)
_NEGATION = _lazy(
    r"\b(?:not|no|never|n't|but|still|except|almost|however|yet|nearly|"
    r"wrong|broken|fails?|failing|anymore)\b|n't\b",
    re.I,
)

# a subject that names no thing: "it runs on ...", "they must ..."
_PERSONAL = PRONOUN_ONLY | {"i", "you", "he", "she", "we", "they"}

_FROM_NOW_ANY = _lazy(r"\s*\b" + FROM_NOW + r"\b", re.I)

# "Hard rule in this repo: ...", "Ok, decision on the metric: ...", "Before you commit: ...": a
# short label that says what the rest of the sentence is
_LABEL = _lazy(r"^([^:\u2014\u2013" + PLACEHOLDER_OPEN + r"]{2,60}?)\s*:\s+(.+)$", re.S)
_RULE_LABEL = _lazy(
    r"\b(?:rules?|conventions?|polic(?:y|ies)|style|heads[- ]up|note|reminder|remember|"
    r"standards?|guidelines?|principles?|requirements?|always|never)\b|" + FROM_NOW,
    re.I,
)
_DECISION_LABEL = _lazy(
    r"\b(?:decision|decided|decide|settle[ds]?|verdict|choice|final call|ruling)\b", re.I
)
_STEP_LABEL = _lazy(r"^(?:before|after|when(?:ever)?)\s+\w", re.I)
_REMEMBER = _lazy(r"^(?:remember|keep in mind|don't forget|note)(?:\s+that)?\s+(?=\w)", re.I)
_SCOPE_LABEL = _lazy(
    r"\b(?:for|in|on)\s+(?:every|all|each|any)\s+(.{2,40}?)\s*(?:" + FROM_NOW + r")?$", re.I
)
# a rule stated about the project rather than as an instruction: "tests must never call the
# real API", "in this codebase tests are always table-driven", "order ids are UUIDv7"
_MODAL_RULE = _lazy(
    r"\b(?:must|should|shall|needs? to|has to|have to)\s+(?:never|always|not|only)\b"
    r"|\b(?:must|has to|have to)\b(?!\s+(?:have\b|'ve\b|be\s+\w+ing\b))",
    re.I,
)  # ("it
#                                                                             must be failing")
_ALWAYS_NEVER = _lazy(r"\b(?:always|never)\b", re.I)
_IN_PROJECT = _lazy(
    r"^in (?:this|our|the) (?:repo|repository|project|codebase|code base|team|"
    r"service|app)\b",
    re.I,
)
_STATEMENT = _lazy(
    r"^(?:in (?:this|our|the) [\w ]{2,30}?,?\s+)?(?:the\s+|our\s+|all\s+|every\s+)?"
    r"[\w./#<>-]+(?:\s+[\w./#<>-]+){0,6}\s+(?:(?:must|should|shall|need|needs|has|have|"
    r"are|is|go|goes|get|gets|live|lives|stay|stays)\b|(?:always|never)\s+\w)",
    re.I,
)

_HYPOTHETICAL = _lazy(r"\b(?:would|could|might)\b", re.I)
# clause breaks: ", and", " but", ";", and a comma before a "don't" ("make a PR, don't mention
# claude": the request, then a rule for it)
_CLAUSES = _lazy(
    r",\s*(?:and|but|so)\s+|\s+but\s+|;\s*|,\s*(?=(?:don't|do not|dont|never)\s)", re.I
)
_ASSENT = _lazy(
    r"^(?:(?:yes|yeah|yep|ok(?:ay)?|sure|fine|great|good|alright|perfect|cool)"
    r"(?:\s+please)?\s*[,.!]\s*)+(?:and\s+|then\s+|so\s+)?(?=\S)",
    re.I,
)

# "the v3 upgrade is already done", "the GitHub link is <url>": facts the user states so the
# agent does not redo or look up what is known
_ALREADY = _lazy(
    r"^(?:the|our)\s+(.{2,50}?)\s+(?:is|are|was|were|has been|have been)\s+already\s+"
    r"(done|fixed|implemented|merged|finished|complete|completed|in place|upgraded|"
    r"migrated|deployed|installed)$",
    re.I | re.S,
)
_LINK_IS = _lazy(
    r"^(?:the|our)\s+([\w .'-]{2,40}?)\s+(?:is|lives at|is at)\s+("
    + PLACEHOLDER_OPEN
    + r"\d+"
    + PLACEHOLDER_CLOSE
    + r")$",
    re.I | re.S,
)
_STILL_BROKEN = _lazy(
    r"^(.{3,80}?)\s+still\s+(?:does not|doesn't|doesnt|do not|don't|isn't|is not|"
    r"won't|will not)\s+work\b",
    re.I | re.S,
)
# "I changed my mind a bit about it and would like to combine the logic: take the least nested
# path first, but ...": a choice the user revises is a decision by its nature (they thought about
# it twice); the rule is what follows the colon (without one, "I changed my mind and would like
# to see the tests first" is a request for this turn, and the other rules judge it)
_REVISED = _lazy(
    r"\b(?:i|we)(?:'ve| have)? changed (?:my|our) minds?\b([^:?]{0,120}):\s+(.{8,300})$",
    re.I | re.S,
)

# a decision's closing word: "Let's go with X — decided.", "We'll use Y; agreed."
_SAID_SO = _lazy(r"\s*(?:[,;:\u2014\u2013]|\s-)\s*(?:decided|agreed|settled|that's final)$", re.I)

_DO_PREFIX = _lazy(r"^(?:(?:and|also|then|please|always|never|don't|do not|dont)\s+)*", re.I)

# "Don't stop until all functions are ported, tests pass, and you have 100% coverage"
_UNTIL_DONE = _lazy(
    r"^(?:don't|do not|never)\s+(?:stop|finish|quit|end)\s+until\s+(.{8,160})$", re.I
)


def _labelled(body: str, corrected: bool) -> tuple[str, str, bool] | None:
    """A rule or decision that the patterns of classify_sentence miss: after a label ("Hard rule in
    this repo: seed everything with random_state=42", "Ok, decision on the metric: ...",
    "Before you commit: ..."), with "from now on" anywhere in it, or stated about the project
    ("tests must never call the real API")."""
    label = None
    remember = _REMEMBER.match(body)  # "remember that all changes have to go through CI"
    if remember:
        label, body = "remember", body[remember.end() :]
    m = _LABEL.match(body) if not remember else None
    if m and len(words_of(m.group(1))) <= 9:
        label, body = m.group(1).strip(), m.group(2).strip()
    decided = bool(label and _DECISION_LABEL.search(label))
    ruled = bool(label and (_RULE_LABEL.search(label) or _STEP_LABEL.match(label)))
    timeless = bool(_FROM_NOW_ANY.search(body))
    if timeless:
        body = _FROM_NOW_ANY.sub("", body).strip(" ,")
    if not (label or timeless or _MODAL_RULE.search(body) or _IN_PROJECT.match(body)):
        return None
    kind = (
        "correction" if corrected else "decision" if decided or timeless and not ruled else "rule"
    )
    found = (
        classify_sentence(body, corrected)
        or classify_sentence(DASH_CLAUSE.split(body, 1)[0], corrected)
        if label or timeless
        else None
    )
    lesson = (
        found[1]
        if found
        else decision_lesson(body)
        or _stated(
            body, decided or timeless, decided or ruled or timeless or bool(_IN_PROJECT.match(body))
        )
    )
    if not lesson:
        return None
    if label and (_STEP_LABEL.match(label) or _SCOPE_LABEL.search(label)):
        scope = _SCOPE_LABEL.search(label)
        lead = f"for every {scope.group(1)}" if scope else label
        lesson = f"{lead[0].upper()}{lead[1:]}, {lesson[0].lower()}{lesson[1:]}"
    elif not (label and (decided or ruled) or timeless or found):
        if not (_MODAL_RULE.search(body) or _IN_PROJECT.match(body) and _ALWAYS_NEVER.search(body)):
            return None  # (a bare label, "Next up: ...": no rule in it)
    return kind, lesson, False


def _stated(body: str, decided: bool, signalled: bool) -> str | None:
    """The rule a statement makes ("Tests must never talk to the real API"; with ``decided``,
    "Order ids are UUIDv7"), up to its first dashed clause unless that one is an instruction
    too; None when it is no statement about a thing (a pronoun for subject) or, unless
    ``signalled`` (a label, "from now on", "in this repo"), about the thing at hand."""
    if not _STATEMENT.match(body) or words_of(body)[0].lower() in _PERSONAL:
        return None
    if not (decided or signalled or _MODAL_RULE.search(body) or _ALWAYS_NEVER.search(body)):
        return None
    if not signalled and words_of(body)[0].lower() in DETERMINERS:
        return None  # "the function should always return a list": the
    #                                           thing at hand, not a rule
    first, *rest = DASH_CLAUSE.split(body, 1)
    return body if rest and imperative(_DO_PREFIX.sub("", rest[0])) else first


def _instructions_only(lesson: str) -> str:
    """The lesson up to its first ";" or dashed clause that is no instruction: in "use the key K
    only in maps; twilio token T; jwt J" only the first clause is a rule ("...; write raw SQL"
    stays), and in "seed everything with 42 — splits, CV — I need runs reproducible" the reason
    goes."""
    parts = re.split(r"(;|\s+[\u2014\u2013]\s+|\s+-\s+)", lesson)  # clause, separator, ...
    kept = parts[0]
    for separator, clause in zip(parts[1::2], parts[2::2]):
        if not imperative(_DO_PREFIX.sub("", clause.strip())):
            break
        kept += separator + clause
    return kept


# where a service the project needs runs, as the user tells it: "redis and postgres are running
# on 192.168.133.114", "the database runs on port 5433" (an address, a host name or a port only)
_RUNS_ON = _lazy(
    r"^((?:the\s+|our\s+)?[a-z][\w.+-]*(?:(?:\s*,\s*|\s+and\s+|\s+)[a-z][\w.+-]*){0,3}?)\s+"
    r"(?:(?:is|are)\s+(?:running|hosted|listening|served|up)|runs?|lives?)\s+(?:on|at)\s+"
    r"(\d{1,3}(?:\.\d{1,3}){3}(?::\d{2,5})?|localhost(?::\d{2,5})?|port\s+\d{2,5}|"
    r"[a-z0-9-]+(?:\.[a-z0-9-]+)+:\d{2,5})$",
    re.I,
)


def _runs_on(body: str) -> str:
    """ "Redis and postgres run on 192.168.133.114" from a clause saying so; "" otherwise."""
    for clause in DASH_CLAUSE.split(body):
        m = _RUNS_ON.match(_LEAD.sub("", clause.strip(" ,.")).strip())
        if m and m.group(1).split()[0].lower() not in _PERSONAL:
            plural = " and " in m.group(1) or "," in m.group(1)
            name = m.group(1).strip()
            return f"{name[0].upper()}{name[1:]} {'run' if plural else 'runs'} on {m.group(2)}"
    return ""


def _facts(body: str, saved: list[str]) -> list[str]:
    """Facts the user states about the project's state: "the v3 upgrade is already done", "the
    GitHub link is <url>" (a link only), where a service runs (``_runs_on``); each part of "X
    and Y" on its own."""
    where = _runs_on(body)
    out = [where] if where else []
    for part in re.split(r"\s+and\s+", CLAUSE_CUT.sub("", body))[:4]:
        part = _LEAD.sub("", part.strip(" ,.")).strip()
        m = _ALREADY.match(part)
        if m and len(words_of(m.group(1))) <= 6 and not DEICTIC.match(m.group(1)):
            out.append(f"The {m.group(1).strip()} is already {m.group(2).lower()}")
            continue
        m = _LINK_IS.match(part)
        if m:
            index = int(PLACEHOLDER.match(m.group(2)).group(1))
            if index < len(saved) and saved[index].startswith(("http://", "https://")):
                out.append(f"The {m.group(1).strip()} is {m.group(2)}")
    return out


_NOT_SUPPORTED = _lazy(
    r"^(?:i\s+(?:just\s+|only\s+)?(?:found out|realized|realised|learned|noticed|discovered)\s+"
    r"(?:now\s+)?(?:that\s+)?)?(.{2,60}?)\s+(?:is|are)(?:\s+not|n't)\s+supported\s+(?:by|in|on)\s+"
    r"([\w.+-]+(?:\s[A-Z0-9][\w.+-]*)?)[\s:;,(!.\\]*$",
    re.I,
)
_INSTEAD = _lazy(
    r"\b(?:rewrit|chang|switch|convert|port|mov|migrat|replac)\w*\s+(?:this|it|that|them|"
    r"these)\s+(?:to|with|so it uses)\s+(?:use\s+)?(.{3,60}?)[?.!]*$",
    re.I,
)
# "Ensure that when X runs as a test, the status is always set as Backlog or the test will not
# work": a condition the user says something depends on
_OR_BREAKS = _lazy(
    r"^(?:please\s+)?(?:ensure|make sure)(?:\s+that)?\s+(.{10,160}?),?\s+(?:or|otherwise)\s+"
    r"(.{2,40}?)\s+(?:will not|won't|wont|doesn't|does not|can't|cannot|will fail to)\s+work[.!]*$",
    re.I | re.S,
)
_KEEP_GETTING = _lazy(
    r"^(?:i|we)\s+keep\s+(?:getting|hitting|seeing|running into)\s+(.{0,40}?\b(?:errors?|failures?|"
    r"warnings?|exceptions?|crash(?:es)?|timeouts?|panics?))\s+(?:when|whenever)\s+"
    r"(.{5,}?)(?:\s*[\u2014\u2013-]+\s*(?:how|what|why|can|could|is there)\b.*)?[?.!]*$",
    re.I | re.S,
)
_YOU_DESTROYED = _lazy(
    r"^you\s+(?:just\s+|really\s+)?(deleted|removed|wiped|erased|overwrote|nuked|dropped)\s+"
    r"(?:all\s+)?(?:my|our)\s+"
    r"([^\s?!.,]+(?:\s[^\s?!.,]+)?)\s*[?!.]*$",
    re.I,
)
_BASE_VERB = {
    "deleted": "delete",
    "removed": "remove",
    "wiped": "wipe",
    "erased": "erase",
    "overwrote": "overwrite",
    "nuked": "delete",
    "nuke": "delete",
    "dropped": "drop",
}
_PARENTHESES = _lazy(r"\s*\([^()]*\)")
_RELATIVE_END = _lazy(r"\s+(?:that|which|who)\s+[^,;]*$")


def _constraint(sentence: str, following: list[str], saved: list[str]) -> str:
    """A constraint the user found, as a fact: "Chrome does not support it: use proper HTML
    ruby elements instead" (from "I just found out this is not supported by Chrome ... can you
    rewrite this to use proper HTML ruby elements?"); "Build errors happen when MDX files have
    URLs in angle brackets" (from "I keep getting build errors when ..."). "" for none."""
    body = _LEAD.sub("", sentence.strip()).strip()
    m = _NOT_SUPPORTED.match(body) if not body.endswith("?") else None
    if m:
        what, where = m.group(1).strip(), m.group(2).strip()
        if what.lower() not in PRONOUN_ONLY:
            return finish_lesson(f"{where} does not support {what}", saved)
        for later in [f for f in following if words_of(f)][:3]:
            instead = _INSTEAD.search(later.strip())
            if instead:
                return finish_lesson(
                    f"{where} does not support it: use {instead.group(1)} instead", saved
                )
        return ""
    m = _YOU_DESTROYED.match(body)
    if m:  # the user finding their work destroyed: a rule for every later session
        verb = _BASE_VERB.get(m.group(1).lower(), m.group(1).lower())
        what = unmask_quoted(m.group(2), saved)
        if (
            what.lower() in PRONOUN_ONLY
            or words_of(what)
            and words_of(what)[0].lower() in ("whole", "entire")
        ):
            what = what if what.lower() not in PRONOUN_ONLY else ""
        if not what:
            return ""
        shown = f"`{what}`" if re.search(r"[-_/.~]", what) else what
        return f"Never {verb} {shown} without asking the user first"
    m = _OR_BREAKS.match(body)
    if m and words_of(m.group(1)) and words_of(m.group(1))[0].lower() not in PRONOUN_ONLY:
        return finish_lesson(
            f"Ensure {m.group(1).strip(' ,')}, or {m.group(2).strip()} will not work", saved
        )
    m = _KEEP_GETTING.match(body)
    if m:
        what, when = m.group(1).strip(), m.group(2).strip(" ,;")
        lesson = f"{what} happen{'' if what.lower().endswith('s') else 's'} when {when}"
        for shorter in (_PARENTHESES, _RELATIVE_END):  # the condition's core, not a cut
            if len(unmask_quoted(lesson, saved)) > LESSON_MAX:
                lesson = shorter.sub("", lesson)
        return finish_lesson(lesson, saved)
    return ""


def _clause_feedback(body: str, corrected: bool) -> tuple[str, str, bool] | None:
    """A lesson in a later clause of a sentence ("I have both, but I don't want to make
    assumptions about people's env"; "yes please, and let's make it cross-browser"); each clause
    passes the same checks as a sentence."""
    parts = _CLAUSES.split(body)
    if _HYPOTHETICAL.search(parts[0]):
        return None  # "the fix would be to say X, and keep Y": weighing options, not a rule
    for part in parts[1:4]:
        part = _LEAD.sub("", part.strip())
        if not part or _HEDGE.match(part) or _ONE_OFF.search(part) or QUESTION_START.match(part):
            continue
        found = classify_sentence(part, corrected)
        if found is not None:
            return found
    return None


# Markdown's bold outside code, which a pasted plan is written in
_EMPHASIS = _lazy(r"\*\*(?=\S)|(?<=\S)\*\*")


def prompt_feedback(prompt: str, corrected: bool = False) -> list[Feedback]:
    """Corrections, confirmations, preferences, rules and decisions stated in a prompt.

    Each ``Feedback.lesson`` is the lesson as an instruction ("Use pnpm instead of npm"),
    capitalised, at most 120 characters; "" for a confirmation (or a bare "that's wrong"), which
    the caller pairs with what was confirmed or corrected. Questions, quoted and code text,
    pasted logs, hedged, conditional and one-off ("for now") sentences give nothing. Never
    raises.
    """
    try:
        return _prompt_feedback(prompt, corrected)
    except Exception:  # noqa: BLE001
        return []


def _prompt_feedback(prompt: str, corrected: bool = False) -> list[Feedback]:
    if not isinstance(prompt, str) or not prompt.strip():
        return []
    text = redact(prompt)[:_PROMPT_MAX]
    masked, saved = mask_quoted(text)
    masked = _EMPHASIS.sub("", masked)  # "**Decision: Use X for simplicity** - ..." (a plan)
    out: list[Feedback] = []
    seen: set[tuple[str, str]] = set()
    pending: str | None = None  # a bare "that's wrong" waiting for the instruction after it

    def emit(kind: str, lesson: str, sentence: str, user_scope: bool) -> None:
        key = (kind, lesson.lower())
        if key in seen:
            return
        seen.add(key)
        out.append(
            Feedback(
                kind=kind,
                lesson=lesson,
                user_scope=user_scope,
                text=cap_text(unmask_quoted(sentence, saved).strip(), TEXT_MAX),
            )
        )

    sentences = prompt_sentences(masked)
    for index, sentence in enumerate(sentences):
        constraint = _constraint(sentence, sentences[index + 1 :], saved)
        if constraint and len(words_of(constraint)) >= 4:
            emit(
                "correction" if constraint.startswith("Never ") else "fact",
                constraint,
                sentence,
                False,
            )
            continue
        if not sentence.strip().endswith("?"):
            for fact in _facts(_SAID_SO.sub("", sentence.strip().rstrip(" .!;:")), saved):
                lesson = finish_lesson(fact, saved)
                if lesson and len(words_of(lesson)) >= 3:
                    emit("fact", lesson, sentence, False)
        found = _sentence_feedback(sentence, saved, pending is not None or corrected)
        if found is None:
            if pending is not None:
                emit("correction", "", pending, False)
                pending = None
            continue
        kind, lesson, user_scope = found
        if kind == "correction" and not lesson:
            if pending is not None:
                emit("correction", "", pending, False)
            pending = sentence
            continue
        if pending is not None:
            if kind != "confirmation":
                kind = "correction"
            sentence = f"{pending} {sentence}"
            pending = None
        if kind != "confirmation":
            sentence += _said_with(sentences[index + 1 : index + 2], saved)
        emit(kind, lesson, sentence, user_scope)
    if pending is not None:
        emit("correction", "", pending, False)
    for index, sentence in enumerate(sentences):
        style = _instructions_style(sentence)
        if style:
            emit("preference", style, sentence + _said_with(sentences[index + 1 :], saved), False)
    return out


# the agent's instructions file, and how the user wants it written
_INSTRUCTIONS_FILE = _lazy(r"(?<![\w-])(CLAUDE|AGENTS|GEMINI)\.md\b", re.I)
_REWRITE = _lazy(
    r"\b(?:apply|make|rewrite|sharpen|update|edit|restructure|condense|clean up|keep|refactor|"
    r"trim|shorten|tidy|reorgani[sz]e)\b",
    re.I,
)
_STYLES = (
    ("succinct", _lazy(r"\bsu[cs]{1,3}in?c?t\b", re.I)),  # as typed: "succint", "sussinct"
    ("concise", _lazy(r"\bconcise\b", re.I)),
    ("non-repetitive", _lazy(r"\bnon-?repetitive\b|\bwithout repetition\b", re.I)),
)


def _instructions_style(sentence: str) -> str:
    """'Keep <file> succinct and non-repetitive' when a request to rewrite the agent's
    instructions file (Claude Code's, Codex's, Gemini's) asks for a style: how that file is
    written outlasts the request."""
    named = _INSTRUCTIONS_FILE.search(sentence)
    if not named or sentence.strip().endswith("?") or not _REWRITE.search(sentence):
        return ""
    styles = [word for word, pattern in _STYLES if pattern.search(sentence)]
    if not styles:
        return ""
    return f"Keep {named.group(1).upper()}.md {' and '.join(styles)}"


def _said_with(following: list[str], saved: list[str]) -> str:
    """The statement right after a lesson's sentence when it only elaborates it ("There will be
    no realtime sync. All communication goes through the portal's APIs."), for the lesson's
    context: not a question, not a lesson of its own, not a pasted block."""
    if not following:
        return ""
    after = following[0].strip()
    words = words_of(PLACEHOLDER.sub("", after))
    if (
        not 4 <= len(words) <= 40
        or after.endswith("?")
        or QUESTION_START.match(_LEAD.sub("", after))
        or _sentence_feedback(after, saved, False) is not None
    ):
        return ""
    return f" {after}"


def _sentence_feedback(
    sentence: str, saved: list[str], after_correction: bool
) -> tuple[str, str, bool] | None:
    stripped = sentence.strip()
    broken = _STILL_BROKEN.match(_LEAD.sub("", stripped))  # (a question may follow the report)
    if broken and not QUESTION_START.match(_LEAD.sub("", stripped)):
        subject = broken.group(1).strip()
        words = words_of(PLACEHOLDER.sub("x", subject))
        if words and words[0].lower() not in _PERSONAL and len(words) >= 2:
            return (
                "fact",
                finish_lesson(f"Open problem: {subject} still does not work", saved),
                False,
            )
    if not stripped or stripped.endswith("?") or QUESTION_START.match(stripped):
        return None
    revised = _REVISED.search(stripped.rstrip(" .!;:\\"))
    if (
        revised
        and len(words_of(PLACEHOLDER.sub("x", revised.group(2)))) >= 4
        and not _HEDGE.match(revised.group(2))
        and not QUESTION_START.match(revised.group(2))
    ):
        lesson = finish_lesson(revised.group(2).strip(), saved)
        if lesson:
            return "decision", lesson, False
    if not words_of(PLACEHOLDER.sub("", stripped)):
        return None  # nothing but quoted or code text
    body = _SAID_SO.sub("", stripped.rstrip(" .!;:")).rstrip(" .!;:")  # "... — decided."
    assent = _ASSENT.match(body)  # "ok, fine, let's do vite": the choice after the yes
    if assent and len(words_of(body[assent.end() :])) >= 2:
        body = body[assent.end() :]
    words = words_of(PLACEHOLDER.sub("x", body))
    if (
        0 < len(words) <= 12
        and _CONFIRM.match(body)
        and not _NEGATION.search(PLACEHOLDER.sub("", body))
    ):
        return ("confirmation", "", False)
    body = _LEAD.sub("", body)
    corrected = after_correction
    m = _MARKER.match(body)
    if m:
        corrected = True
        body = _LEAD.sub("", body[m.end() :])
        if not body.strip():
            strong = re.search(
                r"wrong|incorrect|not (?:right|correct|what)|misunderstood|broke|"
                r"not like that|not quite|not it",
                m.group(0),
                re.I,
            )
            return ("correction", "", False) if strong else None
    done = _UNTIL_DONE.match(body)  # ("until" otherwise marks a one-off)
    if done and len(words_of(done.group(1))) >= 5:  # not "until it works"
        lesson = finish_lesson(f"The work is done only when {done.group(1).strip()}", saved)
        return ("rule", lesson, False) if lesson else None
    if not body or _HEDGE.match(body) and not WHENEVER.match(body) or _ONE_OFF.search(body):
        return None
    if QUESTION_START.match(body):
        return None
    found = classify_sentence(body, corrected) or _labelled(body, corrected)
    if found is None:
        found = _clause_feedback(body, corrected)
    if found is None:
        return None
    kind, lesson, user_scope = found
    lesson = finish_lesson(_instructions_only(lesson), saved)
    if not lesson or len(words_of(lesson)) < 2:
        return None
    return kind, lesson, user_scope
