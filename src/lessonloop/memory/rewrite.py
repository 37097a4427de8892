"""Whether a model's rewording of a lesson may replace the lesson's own summary.

Memorize's model route (``model_wording.synthesize``) asks a model to word each lesson the
deterministic pass found as one clear sentence. A small model drops the key term ("Use vite"
becomes "Use a build tool"), invents one ("Use vite instead of webpack"), turns a "don't" into a
"do", cuts itself off at the length limit, or runs on into JSON syntax. None of that can be
allowed to reach a memory, so a rewording is accepted only when, word for word, it

- keeps every command, path and name of the lesson: each backticked span, whole and in
  backticks, and each technical token (``config/test.exs``, ``lazy_html``, ``AudioWorklet``);
- keeps every other word of the lesson (by stem: "assumptions" is kept by "assume");
- adds no backticked span the lesson does not hold (a command from its evidence is the run's own,
  `mix credo lib/x.ex` for "Lint with `mix credo`", or another step than the fix), no technical
  token or word that the lesson and its evidence do not hold, but for the few words any
  sentence needs (``FREE``), and none of the words people chat with or memorize writes its notes
  with (``CHAT``: "yes", "please", "I", "let's", "successfully") that the lesson does not hold;
- negates nothing the lesson does not negate, and keeps what it negates negated;
- is a whole summary: 3 to ``SUMMARY_MAX`` characters on one line, no ellipsis, no JSON debris.

Otherwise the lesson keeps the summary the deterministic pass wrote. ``problem`` says why a
rewording was refused; the first word of its answer is a category for counting.
"""

from __future__ import annotations

import re

SUMMARY_MAX = 120

_SPAN = re.compile(r"`([^`\n]+)`")
# a token with a digit, a path or dotted name, snake_case, a flag, or inner capitals
_TECHNICAL = re.compile(
    r"(?<![\w`])(?=[\w./:@~+-]*(?:\d|[./_:@~]\w|\w-{1,2}\w|[a-z][A-Z]))[\w./:@~+-]*\w"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
# A small model writing inside a JSON grammar sometimes runs on into the syntax ("edit
# `app/package.json`}, {"): such a summary is debris, not a memory.
_JSON_DEBRIS = re.compile(r'[}\]]\s*,\s*[{\[]|[{\[,]\s*$|"\s*:\s*["{\[]')
_NEGATIONS = frozenset(
    "not no never don't dont do't doesn't isn't aren't won't can't cannot "
    "avoid without instead rather skip stop".split()
)
# words that carry no lesson: a rewording may drop or add them
STOP = frozenset(
    """a an the this that these those it its it's they them their there here of to
in on at by for from with into onto as and or but so if when whenever while then than once
be is are was were been being do does did has have had will would should shall can could may
might must i me my we us our you your he she his her one ones also just very too all any
each every some such what which who whom whose where how why about after before again first
over under up down out off""".split()
)
# the few words a rewording may add without the evidence holding them: how a lesson is said
FREE = STOP | frozenset(
    """use uses used using run runs ran running prefer prefers keep keeps
always only fails fail failed failing error errors fix fixes fixed fixing edit edits edited
change changes changed instead project app repo repository command commands file files
set sets setting need needs needed make makes made work works it's don't doesn't not no never
avoid so try tried retry again first then before after""".split()
)
# what people say to an agent, and the words of memorize's own notes on a lesson ("Ran
# successfully 4 time(s) in the session"), not what a lesson says: a wording may hold them only
# where the lesson itself does ("Yes please, and let's make it cross-browser" is no better lesson)
CHAT = frozenset(
    """yes yeah yep ok okay fine sure please thanks thank let's lets i i'm i'd i've
me my mine we we're our us you you're your maybe perhaps think believe guess also just really
actually basically so well hey hi successfully time times session evidence""".split()
)
_SUFFIXES = ("ations", "ation", "ions", "ion", "ings", "ing", "ies", "es", "ed", "ly", "s", "e")


def stem(word: str) -> str:
    """A crude stem that lets "assume", "assumes", "assumption" and "assumptions" meet."""
    word = word.lower().replace("\u2019", "'")
    word = word[:-2] if word.endswith("'s") else word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:5]


def spans(text: str) -> list[str]:
    return _SPAN.findall(text)


def _bare(text: str) -> str:
    """The text without its backticked spans (each already a unit of its own)."""
    return _SPAN.sub(" ", text)


def technical(text: str) -> set[str]:
    return {t.rstrip(".:") for t in _TECHNICAL.findall(_bare(text))}


def _words(text: str) -> list[str]:
    """The plain words of a text: not in backticks, not technical tokens."""
    return [w.lower().strip("'") for w in _WORD.findall(_TECHNICAL.sub(" ", _bare(text)))]


def _stems(text: str, skip: frozenset[str]) -> set[str]:
    return {stem(w) for w in _words(text) if w and w not in skip}


def _negation(word: str) -> bool:
    word = word.lower().replace("\u2019", "'")
    return word in _NEGATIONS or word.endswith("n't")


def negated(text: str) -> set[str]:
    """What a text negates: the backticked spans and stems of the next three words (stop words
    aside) after each negation ("not", "don't", "instead of", "avoid", ...)."""
    tokens = re.findall(r"`[^`\n]+`|[A-Za-z][A-Za-z'\u2019]*", text)
    found, left = set(), 0
    for n, token in enumerate(tokens):
        low = token.lower().replace("\u2019", "'")
        if _negation(low) and (
            low != "instead" or n + 1 < len(tokens) and tokens[n + 1].lower() == "of"
        ):
            left = 3  # ("instead" alone ends a clause: "run `x` instead when ...")
            continue
        if left and (token.startswith("`") or low not in STOP):
            found.add(token if token.startswith("`") else stem(low))
            left -= 1
    return found


def restore_spans(summary: str, rewrite: str) -> str:
    """``rewrite`` with the lesson's backticked spans in backticks again where it kept their
    text but dropped the backticks ("Lint with mix credo" for "Lint with `mix credo`"), as a
    small model often does: the words are the lesson's, only the marks were lost."""
    for span in sorted(set(spans(summary)) - set(spans(rewrite)), key=len, reverse=True):
        parts = re.split(r"(`[^`\n]*`)", rewrite)  # outside the spans it has, at a word's edge
        bare = span.rstrip(".:")  # (an error line's last stop is often left out)
        for i in range(0, len(parts), 2):
            tail = "[.:]*" if bare != span else ""
            found = re.search(rf"(?<![\w`]){re.escape(bare)}{tail}(?![\w`])", parts[i])
            if found and bare:
                parts[i] = f"{parts[i][: found.start()]}`{span}`{parts[i][found.end() :]}"
                break
        rewrite = "".join(parts)
    return rewrite


def form_problem(text: str) -> str | None:
    """Why ``text`` is no whole summary (category ``form``), or None: 3 to SUMMARY_MAX
    characters on one line, no ellipsis, no unclosed backtick, no JSON debris."""
    if not 3 <= len(text) <= SUMMARY_MAX:
        return f"form: {len(text)} characters"
    if "\n" in text or "\u2026" in text or "..." in text or text.count("`") % 2:
        return "form: a line break, an ellipsis or an unclosed backtick"
    if _JSON_DEBRIS.search(text):
        return "form: JSON syntax in the sentence"
    return None


def ungrounded(text: str, source: str) -> str | None:
    """The first command, path, name or number of ``text`` that ``source`` does not hold, or
    None when it holds them all: each backticked span (its text, spaces aside) and each
    technical token (``config/test.exs``, ``lazy_html``, ``AudioWorklet``, ``3000``), case
    aside. A model's rewording is held to its lesson and evidence with it (``problem``), and a
    lesson a model proposes to the session's events (``model_lessons``): one check for both."""
    source_lower = " ".join(source.lower().split())
    for span in spans(text):
        if " ".join(span.lower().split()) not in source_lower:
            return f"`{span}`"
    for token in sorted(technical(text)):
        if token.lower() not in source_lower:
            return token
    return None


def problem(summary: str, evidence: str, rewrite: str) -> str | None:
    """Why ``rewrite`` may not replace the lesson ``summary`` (whose evidence — content, why,
    the user's words — is ``evidence``), or None when it may. Categories: form, drops, adds,
    negation."""
    text = rewrite.strip()
    bad_form = form_problem(text)
    if bad_form is not None:
        return bad_form
    source = f"{summary}\n{evidence}"
    mine = set(spans(text))
    for span in spans(summary):
        if span not in mine:
            return f"drops: `{span}`"
    theirs = set(spans(summary))
    for span in sorted(mine - theirs):
        # a command, path or name is the lesson's: one from its evidence is the run's own
        # (`mix credo lib/x.ex` for "Lint with `mix credo`") or another step than the fix
        return f"adds: `{span}`"
    kept, wanted = technical(text) | {t for s in mine for t in technical(s)}, technical(summary)
    kept_lower = {t.lower() for t in kept} | {s.lower() for s in mine}
    for token in sorted(wanted):
        if token.lower() not in kept_lower and not any(token.lower() in s.lower() for s in mine):
            return f"drops: {token}"
    missing = ungrounded(text, source)
    if missing is not None:
        return f"adds: {missing}"
    have = _stems(text, frozenset())
    # one negation may stand for another ("instead of jest", "not jest"): what they negate is
    # compared below
    swap = (
        frozenset(w for w in _words(summary) if _negation(w))
        if any(_negation(w) for w in _words(text))
        else frozenset()
    )
    for word in sorted(_stems(summary, STOP | swap)):
        if word not in have:
            return f"drops: the word {word!r}"
    said = set(_words(summary))
    for word in _words(text):
        if word in CHAT and word not in said:
            return f"adds: the chat or note word {word!r}"
    known = _stems(source.replace("`", " "), frozenset())  # words inside spans count here
    for word in sorted(_stems(text, FREE)):
        if word not in known:
            return f"adds: the word {word!r}"
    before, after = negated(summary), negated(text)
    plain = {stem(w) for w in _words(summary)} | {f"`{s}`" for s in spans(summary)}
    if before - after:
        return f"negation: no longer negates {sorted(before - after)[0]}"
    if (after - before) & plain:
        return f"negation: negates {sorted((after - before) & plain)[0]}"
    return None
