"""Which kind of feedback one sentence is, and its lesson (``classify_sentence``).

The sentence shapes, in order, the first that matches deciding: rules ("always ...", "whenever
you ..., ..."), decisions ("let's go with X", "we're moving to chi", "from now on ..."),
preferences ("I prefer ...", "use yarn, not npm"), corrections ("don't ...", "stop ...ing"), facts
the user states ("I deleted config.ru"), how this project's tools are used ("run bd show X to
see ..."), and choices stated as facts or ruled out ("we use pnpm, not npm", "we don't need
Python bindings", "there will be no realtime sync"). Precision over recall: a task request
("let's update the readme", "let's use a dict here") is no lesson.
"""

from __future__ import annotations

import re

from ..lazyre import lazy as _lazy
from .lesson_forms import (
    CLAUSE_CUT,
    QUALITIES,
    TASK_BOUND,
    decision_lesson,
    lets_more_lesson,
    names_a_thing,
    prefer_lesson,
    rather_lesson,
    strip_subject,
    swap_lesson,
    want_to_lesson,
)
from .phrasing import (
    DEICTIC,
    DETERMINERS,
    PLACEHOLDER_OPEN,
    PRONOUN_ONLY,
    VERBS,
    gerund_base,
    imperative,
    words_of,
)

__all__ = ["DASH_CLAUSE", "FROM_NOW", "WHENEVER", "classify_sentence"]


FROM_NOW = (
    r"(?:from now on|going forward|moving forward|from here on(?: out)?|henceforth|"
    r"in (?:the )?future|for future (?:work|changes|sessions)|for good)"
)

# "we're moving to chi and dropping gorilla/mux": a decision between two things
_MOVING = _lazy(
    r"^(?:we(?:'re| are)|i'm|i am)\s+(?:moving|switching|migrating|standardi[sz]ing)\s+"
    r"(?:over\s+)?(?:to|on)\s+(.+?)(?:(?:\s+and|,)\s+(?:dropping|ditching|replacing|"
    r"abandoning|leaving|retiring|no more)\s+(.+?))?(?:\s+in new code)?$",
    re.I | re.S,
)
# "I like f-strings better than .format()"; "for CLI output I always want rich tables, not prints"
_LIKE_BETTER = _lazy(
    r"^i\s+(?:really\s+)?(?:like|prefer)\s+(.+?)\s+(?:better|more)\s+than\s+([^,;]+)", re.I | re.S
)
_WANT_NOT = _lazy(
    r"^(?:for\s+([^,]{2,40}?),?\s+)?i\s+(?:always\s+)?want\s+([^,;]+?),\s*not\s+([^,;]+)$",
    re.I | re.S,
)

DASH_CLAUSE = _lazy(r"\s+[\u2014\u2013]\s+|\s+-\s+")
_FROM_NOW_LEAD = _lazy(r"^" + FROM_NOW + r"\b[\s,:;\u2014\u2013-]*(.+)$", re.I | re.S)
_FROM_NOW_TRAIL = _lazy(r"^(.+?)[\s,;\u2014\u2013-]+" + FROM_NOW + r"\s*$", re.I | re.S)
_LETS = _lazy(
    r"^(?:let's|let us|lets|we'll|we will|we're going to|we are going to|"
    r"we're gonna)\s+(go with|stick with|stick to|standardi[sz]e on|"
    r"settle on|adopt|keep using|stay with|use)\s+(.+)$",
    re.I | re.S,
)
# "let's do vite", "let's also migrate to AudioWorklet", "let's keep the file name", "let's make
# it cross-browser": a choice for the project, unlike "let's update the readme" (a task)
_LETS_MORE = _lazy(
    r"^(?:let's|let us|lets)\s+(?:also\s+|just\s+|then\s+|now\s+)?"
    r"(do|switch to|migrate to|move to|keep|make (?:it|this|the \w+))\s+(.+)$",
    re.I | re.S,
)
# "I don't want to make assumptions about people's env", "I'd like to keep it 3 simple files"
_WANT_TO = _lazy(
    r"^(?:but\s+|and\s+|so\s+)?(i|we)(?:\s+(do not|don't|dont)\s+(?:really\s+)?want"
    r"|(?:'d|\s+would)\s+(?:like|prefer)|\s+(?:really\s+)?want)\s+(?:you\s+|us\s+)?to\s+(.+)$",
    re.I | re.S,
)

_NO_NEEDED = _lazy(
    r"^no\s+(.{2,50}?)\s+(?:is\s+|are\s+)?(?:needed|required|necessary)$", re.I | re.S
)
# "also we don't need to check for the existence of the file, let's just launch it": a step the
# user drops for good (what to do instead, when said, stays with it)
_NO_NEED_TO = _lazy(
    r"^(?:also\s+|and\s+|but\s+|so\s+)?(?:we|you)\s+(?:don't|do not|dont)\s+need\s+to\s+"
    r"([^,;]{4,80}?)(?:\s*[,;]\s*(?:(?:let's|lets|let us|we can|you can)\s+)?just\s+([^,;]{2,60}))?$",
    re.I | re.S,
)
# "now we have cache so we should change TUI that it launches the page rather than regenerating
# it": a choice between two ways, stated as what the project should do
_SHOULD_RATHER = _lazy(
    r"^(?:[^,]{0,40}?\b(?:so|and|then)\s+)?we\s+should\s+(\w+\s[^;]{2,100}?\s"
    r"(?:rather than|instead of)\s+[^,;]{2,60})$",
    re.I | re.S,
)
# "I deleted config.ru": a fact about the project the user changed themselves
_I_REMOVED = _lazy(
    r"^i\s+(?:have\s+|'ve\s+|just\s+|already\s+)*(deleted|removed|renamed|moved)\s+"
    r"(?:the\s+)?([\w.-]*\w\.\w{1,8}|[\w.-]+/[\w./-]*)(?=$|[\s,;])(.*)$",
    re.I | re.S,
)
# "Run bd show X to see the issue details": how this project's tools are used
_RUN_TO = _lazy(
    r"^(?:please\s+)?run\s+(`?)([a-z][\w.-]*(?:\s+[\w.:/=-]+){0,4}?)\1\s+to\s+"
    r"(see|find|get|list|show|view|look up)\s+(.{4,80})$",
    re.I | re.S,
)

_GENERIC_NEEDS = frozenset(
    """change changes action actions update updates fix fixes more further help
worries worry rush need problem problems reply response answer""".split()
)

_GO_WITH = _lazy(
    r"^(?:we(?:'re| are|'ll| will)?|i(?:'ll| will)?)\s+(?:go|going)\s+with\s+(.+)$", re.I | re.S
)
# "Refactor the tests to use Vitest (https://vitest.dev/) as the standardized testing
# framework": inside a task, the tool named as the project's standard is a lasting choice
_AS_STANDARD = _lazy(
    r"\buse\s+([\w.@/+-]+(?:\s+[\w.@/+-]+)?)(?:\s+\([^)]{0,80}\))?\s+as\s+(?:the|our|its)\s+"
    r"((?:standard(?:ized|ised)?|default|main|preferred|canonical|only)\s+"
    r"(?:[\w-]+\s+)?(?:framework|library|runner|tool|formatter|linter|bundler|"
    r"package manager|database|language|build tool|test runner|client|server|orm))\b",
    re.I | re.S,
)
_DECIDED = _lazy(
    r"^(?:we|i)(?:'ve| have)?\s+(?:decided|agreed|settled)\s+(?:(to|on|that)\s+)(.+)$"
    r"|^(?:the\s+)?decision(?:\s+is)?\s*[:\u2014\u2013-]\s*(?:to\s+)?(.+)$",
    re.I | re.S,
)
_RULE = _lazy(
    r"^(?:(?:in this (?:repo|repository|project|codebase|code base|team)|here|in general|"
    r"generally),?\s+)?"
    r"(?:(?:you|we)\s+(?:should|must|need to|have to|gotta)\s+|(?:make sure|be sure|remember)"
    r"\s+(?:to|that you|you|that we|we)\s+|we\s+|please\s+)?"
    r"(always|never)\s+(.+)$",
    re.I | re.S,
)
_NEVER_EVER = _lazy(r"^(?:please\s+)?(?:don't|do not|dont)\s+ever\s+(.+)$", re.I | re.S)
_I_ALWAYS = _lazy(r"^i\s+(always|never)\s+(.+)$", re.I | re.S)
_PREFER = _lazy(
    r"^(i|we)(?:'d| would)?\s+(?:really\s+|strongly\s+|much\s+|generally\s+|"
    r"usually\s+)?prefer\s+(.+)$|^(my|our) preference is(?: to)?\s+(.+)$",
    re.I | re.S,
)
_PREFER_BARE = _lazy(
    r"^(?:please\s+)?prefer\s+(.+\s(?:over|rather than|instead of)\s.+)$", re.I | re.S
)
_I_LIKE = _lazy(r"^i\s+(?:really\s+)?(?:like|love)\s+to\s+(.+)$", re.I | re.S)
_DONT = _lazy(r"^(?:please\s+)?(?:don't|do not|dont)\s+(.+)$", re.I | re.S)
# "Edit plan to NOT mention Instructor in the instructions file": a "not" written in capitals
# inside a request is the user's correction of what the agent did
_EMPHATIC_NOT = _lazy(r"^(?:[\w@./-]+\s+){1,5}?to\s+NOT\s+(.+)$", re.S)
_STOP = _lazy(
    r"^(?:please\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?stop\s+(\w+ing)\b(.*?)\??$",
    re.I | re.S,
)
_AVOID = _lazy(r"^(?:please\s+)?avoid\s+(.+)$", re.I | re.S)

_RATHER = _lazy(
    r"^(i|we)(?:'d| would)\s+(?:much\s+)?rather\s+(?:(?:you|we)\s+)?(not\s+)?(.+?)"
    r"(?:\s+than\s+(.+))?$",
    re.I | re.S,
)
# a bare contrast stated as a rule: "Use yarn, not npm" (the comma marks the contrast)
_USE_NOT = _lazy(r"^(use|prefer|pick|choose)\s+([^,;]+?),\s*not\s+([^,;]+)$", re.I | re.S)
# "use yarn instead of npm": the same contrast in words
_USE_INSTEAD = _lazy(
    r"^(?:please\s+)?(use|pick|choose)\s+([^,;]+?)\s+(?:instead of|rather than)\s+([^,;]+?)$",
    re.I | re.S,
)
# "in this repo we use conventional commits", "we use 2 spaces for indentation in this project"
_WE_USE = _lazy(
    r"^in this (?:repo|repository|project|codebase|team),?\s+we\s+(?:always\s+)?use\s+([^,;]{2,60})$"
    r"|^we\s+(?:always\s+)?use\s+([^,;]{2,60}?)\s+(?:in|for|throughout)\s+this\s+"
    r"(?:repo|repository|project|codebase)$",
    re.I | re.S,
)
# "we use pnpm, not npm", "this project uses Vitest as its test runner", "we're using tabs, not
# spaces": the project's choice stated as a fact (a task's "we use it here" is the thing at hand)
_WE_USE_BARE = _lazy(
    r"^(?:we(?:'re| are)?|this (?:project|repo|repository|codebase|team|app)|our (?:project|repo|"
    r"team|app|codebase))\s+(?:always\s+|only\s+)?(?:use|uses|using)\s+([^,;]{2,50}?)"
    r"(?:,?\s+(?:not|instead of|rather than)\s+([^,;]{2,40}?)|\s+(?:as|for)\s+(?:our|its|the)\s+"
    r"([^,;]{2,40}?))?$",
    re.I | re.S,
)
# "we don't need Python bindings", "I don't want any new dependencies": a thing ruled out
_NO_THING = _lazy(
    r"^(?:also\s+|and\s+|but\s+|so\s+)?(?:we|i)\s+(?:really\s+)?(?:don't|do not|dont)\s+"
    r"(?:need|want)\s+(?:any\s+)?(?!to\b)([^,;]{2,50}?)(?:\s+(?:at all|anymore|any more))?$",
    re.I | re.S,
)
# "we're not doing these complex path selections, just picking the latest one", "we won't
# support Windows": a course the user rules out, with what to do instead when they say it
_NOT_DOING = _lazy(
    r"^(?:also\s+|and\s+|but\s+|so\s+)?we(?:'re| are)\s+not\s+(?:going\s+to\s+)?"
    r"(doing|using|supporting|adding|keeping|writing|do|use|support|add|keep|write)\s+"
    r"([^,;]{2,80}?)(?:\s*[,;]\s*(?:we(?:'re| are)\s+)?just\s+([^,;]{2,80}))?$"
    r"|^(?:also\s+|and\s+|but\s+|so\s+)?we\s+(?:won't|will not|wont)\s+"
    r"(do|use|support|add|keep|write)\s+([^,;]{2,80}?)$",
    re.I | re.S,
)
# "there will be no realtime communication between the app and the portal": a constraint on the
# design, stated as how things will be
_THERE_WILL_BE_NO = _lazy(
    r"^there\s+(?:will\s+be\s+no|won't\s+be\s+any|will\s+not\s+be\s+any|is\s+going\s+to\s+be\s+"
    r"no|should\s+be\s+no|must\s+be\s+no)\s+([^;]{4,100}?)$",
    re.I | re.S,
)
_BARE_OBJECTS = frozenset("it that this them so anything something everything one".split())
_GERUND_BASE = {
    "doing": "do",
    "using": "use",
    "supporting": "support",
    "adding": "add",
    "keeping": "keep",
    "writing": "write",
}


# "remember to update the changelog when you change the API": a step tied to an occasion
_REMEMBER = _lazy(
    r"^(?:please\s+)?(?:remember|make sure|be sure)\s+to\s+"
    r"(.+?\s(?:when|whenever|every time|each time|before|after)\s.+)$",
    re.I | re.S,
)
# "the public API must stay backwards compatible": a property that has to hold
_MUST_STAY = _lazy(
    r"^((?:the|our|this|all|every)\s+[^,;]{2,40}?)\s+(?:must|should|needs? to|has to|have to)"
    r"\s+(?:stay|remain)\s+([^,;]{2,60})$",
    re.I | re.S,
)
# what ties a sentence to this task: "here", "for now", "while you refactor"
_THIS_TIME = _lazy(
    r"\b(?:here|there|now|for now|for this|in this (?:function|file|method|test|case|pr|branch)|"
    r"while|until|during|this time)\b[.!]?$|\b(?:while|until|during)\b",
    re.I,
)
# "it should be UTC timestamps everywhere, not local time"
_SHOULD_BE = _lazy(
    r"^(?:it|this|that|they|these|those|everything|all)\s+(?:should|must|needs? to|"
    r"has to|have to|ought to)\s+be\s+([^,;]+?),\s*(?:and\s+)?not\s+([^,;]+)$",
    re.I | re.S,
)

WHENEVER = _lazy(
    r"^(?:whenever|every time|each time|any ?time)\s+(you|we)\s+([^,]{2,80}),\s*"
    r"(?:please\s+)?(?:(always)\s+|(never)\s+)?(.+)$",
    re.I | re.S,
)
_BEFORE = _lazy(
    r"^(before|after)\s+([^,]{2,60}),\s*(?:please\s+)?(?:you\s+should\s+)?"
    r"(always|never)\s+(.+)$",
    re.I | re.S,
)

# "keep the Justfile - update it to run Rust tests instead": a thing that must stay
_KEEP_THING = _lazy(
    r"^keep\s+((?:the|our|this|these|all|every|my)\s+[^,;:\u2014\u2013-]{2,60}?)"
    r"\s*(?:(?:\s-|[,;:\u2014\u2013])\s*(.{0,100}))?$",
    re.I,
)
_KEEP_NOT = _lazy(
    r"^(?:the|our|this|my)\s+(?:same|good|momentum|pace|conversation)\b|"
    r"\b(?:going|in mind|in sync|track|an eye|up|trying)\b",
    re.I,
)


def classify_sentence(body: str, corrected: bool) -> tuple[str, str, bool] | None:
    """(kind, lesson, user_scope) for one sentence with markers stripped, or None."""
    m = _KEEP_THING.match(body)
    if m and not _KEEP_NOT.search(m.group(1)):
        then = imperative(m.group(2) or "")
        return ("rule", f"Keep {m.group(1).strip()}" + (f"; {then}" if then else ""), False)
    m = WHENEVER.match(body)
    if m:
        action = imperative(m.group(5))
        if action:
            never = "never " if m.group(4) else ""
            return (
                "correction" if corrected else "rule",
                f"When {m.group(1).lower()} {m.group(2).strip()}, {never}{action}",
                False,
            )
        return None
    m = _BEFORE.match(body)
    if m:
        action = imperative(m.group(4))
        if action:
            never = "never " if m.group(3).lower() == "never" else ""
            return (
                "correction" if corrected else "rule",
                f"{m.group(1).capitalize()} {m.group(2).strip()}, {never}{action}",
                False,
            )
        return None
    m = _FROM_NOW_LEAD.match(body) or _FROM_NOW_TRAIL.match(body)
    if m:
        lesson = decision_lesson(m.group(1))
        return ("decision", lesson, False) if lesson else None
    m = _MOVING.match(body)
    if m and names_a_thing(m.group(1), 8) and (not m.group(2) or names_a_thing(m.group(2), 6)):
        old = f", not {m.group(2).strip()}" if m.group(2) else ""
        return ("decision", f"Use {m.group(1).strip()}{old}", False)
    m = _LIKE_BETTER.match(body)
    if m and names_a_thing(m.group(1), 6) and names_a_thing(m.group(2), 6):
        return ("preference", f"Use {m.group(1).strip()} instead of {m.group(2).strip()}", True)
    m = _WANT_NOT.match(body)
    if m and names_a_thing(m.group(2), 6) and names_a_thing(m.group(3), 6):
        where = f" for {m.group(1).strip()}" if m.group(1) else ""
        return ("preference", f"Use {m.group(2).strip()}{where}, not {m.group(3).strip()}", True)
    m = _LETS.match(body)
    if m:
        verb = m.group(1).lower()
        obj = m.group(2).strip()
        named = DASH_CLAUSE.split(obj, 1)
        if len(named) == 2 and DEICTIC.match(named[0].strip()):
            obj = named[1].strip()  # "let's go with option B — cursor pagination"
        if (
            not names_a_thing(obj, 40)
            or verb == "use"
            and (TASK_BOUND.search(obj) or re.search(r"\bto\s+\w", obj))
        ):
            return None  # "let's use a dict here", "let's use X to add Y": the task at hand
        head = {"go with": "Go with", "stick with": "Stick with", "stick to": "Stick to"}.get(
            verb, "Use"
        )
        return ("decision", f"{head} {obj}", False)
    m = _I_REMOVED.match(body)
    if m:
        rest = m.group(3).strip(" ,;.")
        if rest and not rest.lower().startswith(
            ("and ", "as ", "so ", "because ", "since ", "which ", "but ")
        ):
            return None  # "I removed x.py from the import list": not the file
        return ("fact", f"`{m.group(2)}` was {m.group(1).lower()} by the user", False)
    m = _RUN_TO.match(body)
    if m:
        words = words_of(m.group(2))
        if (
            not words
            or words[0].lower()
            in DETERMINERS
            | PRONOUN_ONLY
            | VERBS - {"make", "test", "build", "format", "lint", "check"}
            or TASK_BOUND.search(m.group(4))
        ):
            return None  # "run the tests to see", "run it to check that"
        goal = CLAUSE_CUT.sub("", m.group(4)).strip(" ,.")
        if len(words_of(goal)) < 2:
            return None
        return ("rule", f"Run `{m.group(2).strip()}` to {m.group(3).lower()} {goal}", False)
    m = _LETS_MORE.match(body)
    if m:
        return lets_more_lesson(m.group(1).lower(), m.group(2))
    m = _WANT_TO.match(body)
    if m:
        return want_to_lesson(m.group(1).lower(), bool(m.group(2)), m.group(3))
    m = _NO_NEEDED.match(body)
    if m:
        words = [w.lower() for w in words_of(m.group(1))]
        if (
            words
            and len(words) <= 5
            and not set(words) & (_GENERIC_NEEDS | PRONOUN_ONLY)
            and words[0] not in DETERMINERS
        ):
            return ("decision", f"No {m.group(1).strip()} needed", False)
        return None
    m = _NO_NEED_TO.match(body)
    if m:
        step = imperative(m.group(1))
        if step is None or TASK_BOUND.search(step):
            return None  # "we don't need to do that now": this turn's
        instead = (m.group(2) or "").strip(" .")
        verb = [word.lower() for word in words_of(instead)[:1]]
        if not verb or verb[0] in PRONOUN_ONLY | DETERMINERS or verb[0].endswith("ing"):
            instead = ""  # "…, just saying": not what to do instead
        return ("decision", f"Don't {step}" + (f", just {instead}" if instead else ""), False)
    m = _SHOULD_RATHER.match(body)
    if m:
        choice = imperative(m.group(1))
        return ("decision", choice[0].upper() + choice[1:], False) if choice else None
    m = _GO_WITH.match(body)
    if m:
        obj = m.group(1).strip()
        if (
            words_of(obj)
            and words_of(obj)[0].lower() not in PRONOUN_ONLY
            and not DEICTIC.match(obj)
        ):
            return ("decision", f"Go with {obj}", False)
        return None
    m = _AS_STANDARD.search(body)
    if m and m.group(1).split()[0].lower() not in PRONOUN_ONLY and not DEICTIC.match(m.group(1)):
        return ("decision", f"Use {m.group(1)} as the {m.group(2).lower()}", False)
    m = _DECIDED.match(body)
    if m:
        how, obj = m.group(1), m.group(2) or m.group(3)
        if how and how.lower() == "on":
            words = words_of(obj)
            return (
                ("decision", f"Use {obj}", False)
                if words and words[0].lower() not in PRONOUN_ONLY and not DEICTIC.match(obj)
                else None
            )
        lesson = decision_lesson(obj)
        return ("decision", lesson, False) if lesson else None
    swapped = swap_lesson(body)
    if swapped:
        trigger, lesson = swapped
        kind = "rule" if trigger.lower() == "never" and not corrected else "correction"
        return (kind, lesson, False) if lesson else None
    m = _RATHER.match(body)
    if m:
        lesson = rather_lesson(m.group(2), m.group(3), m.group(4))
        return ("preference", lesson, m.group(1).lower() == "i") if lesson else None
    m = _NEVER_EVER.match(body)
    if m:
        action = imperative(m.group(1))
        return ("correction" if corrected else "rule", f"Never {action}", False) if action else None
    m = _I_ALWAYS.match(body)
    if m:
        action = imperative(m.group(2))
        if not action:
            return None
        return ("preference", f"Never {action}" if m.group(1).lower() == "never" else action, True)
    m = _RULE.match(body)
    if m:
        action = imperative(m.group(2))
        if not action:
            return None
        lesson = f"Never {action}" if m.group(1).lower() == "never" else action
        return ("correction" if corrected else "rule", lesson, False)
    m = _PREFER_BARE.match(body)
    if m:
        lesson = prefer_lesson(m.group(1))
        return ("preference", lesson, False) if lesson and lesson.startswith("Use ") else None
    m = _PREFER.match(body)
    if m:
        who = (m.group(1) or m.group(3) or "").lower()
        lesson = prefer_lesson(m.group(2) or m.group(4) or "")
        return ("preference", lesson, who in ("i", "my")) if lesson else None
    m = _I_LIKE.match(body)
    if m:
        action = imperative(m.group(1))
        return ("preference", action, True) if action else None
    m = _DONT.match(body) or _EMPHATIC_NOT.match(body)
    if m:
        action = imperative(m.group(1))
        return ("correction", f"Don't {action}", False) if action else None
    m = _STOP.match(body)
    if m:
        base = gerund_base(m.group(1))
        rest = m.group(2).strip()
        if base and imperative(f"{base} {rest}"):
            return ("correction", f"Stop {m.group(1)} {rest}".strip(), False)
        return None
    m = _AVOID.match(body)
    if m:
        obj = m.group(1).strip()
        words = words_of(obj)
        if (
            words
            and words[0].lower() not in PRONOUN_ONLY
            and (len(words) >= 2 or PLACEHOLDER_OPEN in obj)
        ):
            return ("correction", f"Avoid {obj}", False)
        return None
    if corrected:
        action = imperative(strip_subject(body))
        if action:
            return ("correction", action, False)
        m = _SHOULD_BE.match(body)
        if (
            m
            and names_a_thing(m.group(1))
            and names_a_thing(m.group(2))
            and m.group(1).split()[0].lower() not in QUALITIES
        ):
            return ("correction", f"Use {m.group(1).strip()}, not {m.group(2).strip()}", False)
    m = _USE_NOT.match(body)
    if m and names_a_thing(m.group(2), 4) and names_a_thing(m.group(3), 4):
        return (
            "preference",
            f"{m.group(1).capitalize()} {m.group(2).strip()}, not {m.group(3).strip()}",
            False,
        )
    m = _USE_INSTEAD.match(body)
    if (
        m
        and names_a_thing(m.group(2), 4)
        and names_a_thing(m.group(3), 4)
        and not _THIS_TIME.search(body)
        and not re.match(r"an?\s", m.group(2), re.I)  # "use a dict instead of a list": code
    ):
        return (
            "preference",
            f"{m.group(1).capitalize()} {m.group(2).strip()} instead of {m.group(3).strip()}",
            False,
        )
    m = _WE_USE.match(body)
    if m and names_a_thing(m.group(1) or m.group(2), 8):
        return ("rule", f"Use {(m.group(1) or m.group(2)).strip()} in this project", False)
    m = _REMEMBER.match(body)
    if m:
        action = imperative(m.group(1))
        return ("rule", action, False) if action else None
    ruled_out = _ruled_out(body)
    if ruled_out:
        return ruled_out
    m = _MUST_STAY.match(body)
    if m and names_a_thing(m.group(1), 6) and not _THIS_TIME.search(m.group(2)):
        thing = m.group(1).strip()
        return ("rule", f"{thing[0].upper()}{thing[1:]} must stay {m.group(2).strip()}", False)
    return None


def _ruled_out(body: str) -> tuple[str, str, bool] | None:
    """A project choice stated as a fact ("we use pnpm, not npm" → Use pnpm, not npm), a thing or
    course ruled out ("we don't need Python bindings" → No Python bindings; "we're not
    doing these path selections, just picking the latest one" → Don't do these path selections,
    just pick the latest one), or a design constraint ("there will be no realtime sync" → No
    realtime sync). None for the thing at hand ("we use it here", "we don't need that")."""
    m = _WE_USE_BARE.match(body)
    if (
        m
        and names_a_thing(m.group(1), 5)
        and not TASK_BOUND.search(body[m.start(1) :])
        and not re.search(r"\bto\s+\w", m.group(1))
    ):
        thing = m.group(1).strip()
        if m.group(2) and names_a_thing(m.group(2), 4):
            return ("preference", f"Use {thing}, not {m.group(2).strip()}", False)
        if m.group(3) and names_a_thing(m.group(3), 5):
            return ("preference", f"Use {thing} as the {m.group(3).strip()}", False)
        if not (m.group(2) or m.group(3)) and len(words_of(thing)) <= 3:
            return ("preference", f"Use {thing}", False)
        return None
    m = _NO_THING.match(body)
    if m and not TASK_BOUND.search(m.group(1)):
        words = [w.lower() for w in words_of(m.group(1))]
        if (
            words
            and len(words) <= 6
            and not set(words) & (_GENERIC_NEEDS | PRONOUN_ONLY | {"you", "me", "us", "them"})
            and words[0] not in DETERMINERS | VERBS
        ):
            return ("decision", f"No {m.group(1).strip()}", False)
        return None
    m = _NOT_DOING.match(body)
    if m:
        verb = (m.group(1) or m.group(4)).lower()
        obj = (m.group(2) or m.group(5)).strip()
        words = [w.lower() for w in words_of(obj)]
        if not 0 < len(words) <= 12 or words[-1] in PRONOUN_ONLY or words[0] in _BARE_OBJECTS:
            return None  # "we're not doing that": the thing at hand
        lesson = f"Don't {_GERUND_BASE.get(verb, verb)} {obj}"
        instead = (m.group(3) or "").strip(" .")
        if instead:
            first = words_of(instead)[:1]
            step = (
                f"{gerund_base(first[0])}{instead[len(first[0]) :]}"
                if first and first[0].lower().endswith("ing") and gerund_base(first[0])
                else imperative(instead)
            )
            if step:
                lesson += f", just {step}"
        return ("decision", lesson, False)
    m = _THERE_WILL_BE_NO.match(body)
    if (
        m
        and names_a_thing(m.group(1), 16)
        and len(words_of(m.group(1))) >= 2
        and words_of(m.group(1))[0].lower() not in _GENERIC_NEEDS
        and not TASK_BOUND.search(m.group(1))
    ):
        return ("decision", f"No {m.group(1).strip()}", False)
    return None
