"""The lesson each shape of sentence gives once ``feedback_rules`` has recognised the shape.

"don't use npm, use pnpm" → "Use pnpm, not npm" (``swap_lesson``); "I prefer X over Y" → "Use X
instead of Y" (``prefer_lesson``); "I'd rather you use X than Y" (``rather_lesson``); "let's do
vite" → "Use vite" (``lets_more_lesson``); "I don't want to make assumptions" → "Don't make
assumptions" (``want_to_lesson``); a decision's body (``decision_lesson``). Each gives None when
what the sentence names only makes sense in the conversation ("it", "the first one", "here").
"""

from __future__ import annotations

import re

from ..lazyre import lazy as _lazy
from .phrasing import DEICTIC, DETERMINERS, PRONOUN_ONLY, VERBS, gerund_base, imperative, words_of

__all__ = [
    "CLAUSE_CUT",
    "QUALITIES",
    "TASK_BOUND",
    "decision_lesson",
    "lets_more_lesson",
    "names_a_thing",
    "prefer_lesson",
    "rather_lesson",
    "strip_subject",
    "swap_lesson",
    "want_to_lesson",
]


_SUBJECT = _lazy(
    r"^(?:(?:we|you|i want you to|i'd like you to|i would like you to|i need you to|please|"
    r"let's|let us|we'll|we will|we're going to|we are going to|we're gonna|you'll|you will|"
    r"you should|you must|you need to|you have to|we should|we must|we need to|we have to|"
    r"we'd|we would|you'd|always|also|just|make sure to|make sure you)\s+)+",
    re.I,
)

_WANT_VERBS = frozenset("keep use stick stay avoid".split())

CLAUSE_CUT = _lazy(
    r"\s*(?:,\s*|\s)(?:but|otherwise|and then|so that|except)\b.*$|\s*[;(].*$", re.I | re.S
)

_PROPERTY = _lazy(
    r"^[\w-]*-[\w-]+$|^\w+(?:able|ible|ive|agnostic|compatible|friendly|safe|proof|"
    r"native|less)$",
    re.I,
)

_PROJECT_SCOPE = _lazy(
    r"\s+(?:for|in|across)\s+(?:this|the|our)\s+(?:repo|repository|project|codebase|"
    r"app|team)\s*$",
    re.I,
)
_NOT_A_CHOICE = frozenset(
    """next previous other another step steps task tasks part phase section
item question bug issue point one ones rest remaining same""".split()
)

# "don't use npm here, always use pnpm", "stop using print, use logging": one verb, two objects
_SWAP = _lazy(
    r"^(?:please\s+)?(don't|do not|dont|never|stop)\s+([\w-]+)\s+(.+?)\s*"
    r"(?:[,;]|\s[\u2014\u2013-])\s*(?:and\s+|but\s+)?(?:(?:always|instead|just|rather|"
    r"please)\s+)*([\w-]+)\s+(.+?)(?:\s+instead)?$",
    re.I | re.S,
)
# where a "don't use A in this repo" object ends and its qualifier starts
_QUALIFIER = _lazy(
    r"\s+(?=(?:in|for|when|on|inside|within|during|across|throughout|while|"
    r"everywhere|anywhere)\b)",
    re.I,
)

# "it should be faster, not slower" names no thing to use
QUALITIES = frozenset(
    """faster slower better worse bigger smaller simpler shorter longer easier
harder cleaner clearer more less fine ok okay good bad right wrong correct true false possible
enough done different same higher lower""".split()
)

# words that tie an object to the task at hand ("use a dict here"): a one-off, not a lesson
TASK_BOUND = _lazy(r"\b(?:here|there|this|that|these|those|it|now)\b", re.I)

_OVER = _lazy(r"^(.+?)\s+(?:over|rather than|instead of|more than|to)\s+(.+)$", re.I | re.S)


def strip_subject(rest: str) -> str:
    rest = _SUBJECT.sub("", rest.strip())
    m = re.match(
        r"^(using|sticking with|going with|switching to|moving to)\s+(.+)$", rest, re.I | re.S
    )
    if m:
        verb = {
            "using": "use",
            "sticking with": "stick with",
            "going with": "go with",
            "switching to": "use",
            "moving to": "use",
        }[m.group(1).lower()]
        rest = f"{verb} {m.group(2)}"
    return rest


def names_a_thing(text: str, most: int = 8) -> bool:
    """A thing named on its own ("pnpm", "the logging module"), not "it" or "the first one"."""
    words = words_of(text)
    return (
        0 < len(words) <= most
        and words[0].lower() not in PRONOUN_ONLY
        and not DEICTIC.match(text.strip())
    )


def swap_lesson(text: str) -> tuple[str, str] | None:
    """(trigger, "Use pnpm in this repo, not npm") from "don't use npm in this repo, always use
    pnpm": the lesson names what to do first and keeps what it replaces, not the user's wording.
    None when the sentence has another shape; lesson "" when it only makes sense in the
    conversation ("don't use it, use the other one")."""
    m = _SWAP.match(text)
    if not m:
        return None
    trigger, verb, old, verb2, new = (g.strip() for g in m.groups())
    base = gerund_base(verb) if trigger.lower() == "stop" else verb.lower()
    if base not in VERBS or verb2.lower() != base:
        return None
    if not names_a_thing(new) or not names_a_thing(old):
        return trigger, ""
    old, *qualifier = _QUALIFIER.split(old, 1)
    if qualifier and qualifier[0].lower() not in new.lower():
        new = f"{new} {qualifier[0]}"
    return trigger, f"{base.capitalize()} {new}, not {old}"


def decision_lesson(rest: str) -> str | None:
    rest = strip_subject(rest)
    rest = re.sub(r"^(?:have\s+|'ve\s+)?(?:decided|agreed)\s+to\s+", "", rest, flags=re.I)
    swapped = swap_lesson(rest)
    if swapped:
        return swapped[1] or None
    never = re.match(r"^(never|don't ever|do not ever|don't|do not)\s+(.+)$", rest, re.I | re.S)
    if never:
        body = imperative(never.group(2))
        if not body:
            return None
        word = "Never" if "ever" in never.group(1).lower() else "Don't"
        return f"{word} {body}"
    m = re.match(r"^(go with|stick with|stick to)\s+(.+)$", rest, re.I | re.S)
    if m:
        return rest if words_of(m.group(2)) and not DEICTIC.match(m.group(2).strip()) else None
    return imperative(rest)


def prefer_lesson(obj: str) -> str | None:
    obj = obj.strip()
    m = re.match(r"^not\s+to\s+(.+)$", obj, re.I | re.S)
    if m:
        body = imperative(m.group(1))
        return f"Don't {body}" if body else None
    m = re.match(r"^(?:to|that you|that we|you)\s+(.+)$", obj, re.I | re.S)
    if m:
        return imperative(strip_subject(m.group(1)))
    words = words_of(obj)
    if (
        not words
        or words[0].lower() in PRONOUN_ONLY
        or words[0].lower() in ("when", "if", "that", "whatever", "not", "it's", "this", "that's")
        or DEICTIC.match(obj)
    ):
        return None
    m = _OVER.match(obj)
    if m:
        preferred, other = m.group(1).strip(), m.group(2).strip()
        base = gerund_base(words_of(preferred)[0]) if words_of(preferred) else None
        if base == "use":
            preferred = (
                preferred.split(None, 1)[1] if len(preferred.split(None, 1)) > 1 else preferred
            )
        elif base:
            return None
        if (
            not preferred
            or not other
            or preferred.lower() in PRONOUN_ONLY
            or other.lower() in PRONOUN_ONLY
        ):
            return None
        return f"Use {preferred} instead of {other}"
    base = gerund_base(words[0])
    if base == "use" and len(words) > 1:
        return f"Use {obj.split(None, 1)[1]}"
    return f"Prefer {obj}"


def _choice(obj: str, most: int) -> str | None:
    """The object of a choice, cut before a following clause ("the name of the py file but
    change ..." → "the name of the py file"), or None when it names no choice: a pronoun, the
    thing at hand ("this", "here"), the next step of the task."""
    obj = CLAUSE_CUT.sub("", obj.strip()).strip(" ,.;:!")
    words = [w.lower() for w in words_of(obj)]
    if not words or len(words) > most or words[0] in PRONOUN_ONLY and len(words) == 1:
        return None
    if set(words) & (_NOT_A_CHOICE | {"here", "there", "now", "this", "that", "these", "those"}):
        return None
    return obj


def lets_more_lesson(verb: str, rest: str) -> tuple[str, str, bool] | None:
    """ "let's do vite" → Use vite; "let's migrate to X" → Migrate to X; "let's keep the file
    name" → Keep the file name; "let's make it cross-browser" → Make it cross-browser."""
    if verb == "do":
        obj = _choice(rest, 3)
        if not obj or words_of(obj)[0].lower() in DETERMINERS | VERBS:
            return None  # "let's do it", "let's do the tests": the task at hand
        return ("decision", f"Use {obj}", False)
    if verb == "keep":
        obj = _choice(rest, 10)
        first = words_of(obj)[0].lower() if obj else ""
        if (
            not obj
            or first.endswith("ing")
            or first in ("in", "on", "going", "trying")
            or len(words_of(obj)) < 2
        ):
            return None  # "let's keep going", "keep in mind", "keep it"
        return ("decision", f"Keep {obj}", False)
    if verb.startswith("make"):
        obj = _choice(rest, 3)
        if (
            not obj
            or len(words_of(obj)) != 1
            or not _PROPERTY.match(obj)
            or obj.lower() in QUALITIES
            or obj.lower() in VERBS
        ):
            return None  # "let's make it work", "let's make it faster"
        return ("decision", f"{verb[0].upper()}{verb[1:]} {obj}", False)
    scope = _PROJECT_SCOPE.search(rest)  # "... for this repo": where the choice holds
    obj = _choice(rest[: scope.start()] if scope else rest, 6)  # switch to / migrate to / move to
    if not obj or DEICTIC.match(obj):
        return None
    where = f" {scope.group(0).strip()}" if scope else ""
    return ("decision", f"{verb[0].upper()}{verb[1:]} {obj}{where}", False)


def want_to_lesson(who: str, negated: bool, rest: str) -> tuple[str, str, bool] | None:
    """ "I don't want to make assumptions about people's env" → Don't make assumptions about
    people's env; "I'd like to keep it the same 3 simple files" → Keep it the same 3 simple
    files (only choices that last: keep, use, stick, stay, avoid — "I want to fix the bug" is
    the task at hand)."""
    action = imperative(CLAUSE_CUT.sub("", rest) if not negated else rest.strip())
    if not action or re.search(
        r"\b(?:here|there|this|that|these|those|now|yet|anymore)\b", action, re.I
    ):
        return None
    if negated:
        return ("preference", f"Don't {action}", False)
    if words_of(action)[0].lower() not in _WANT_VERBS:
        return None
    return ("preference", action, False)


def rather_lesson(negated: str | None, action: str, other: str | None) -> str | None:
    """ "I'd rather you use pathlib than os.path" → "Use pathlib instead of os.path"."""
    action = imperative(action) or ""
    if not action or TASK_BOUND.search(action) or other and not names_a_thing(other):
        return None
    if negated:
        return f"Don't {action}"
    if not other:
        return action
    if action.lower().startswith("use "):
        return f"Use {action[4:]} instead of {other.strip()}"
    return f"{action} rather than {other.strip()}"
