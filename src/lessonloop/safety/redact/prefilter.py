"""The prefilter: which triggers (needles, needle-less patterns) occur in a text at all, so a
pass runs only the detectors that can find something and a text without any is returned as it
is. Lines seen before cost a dictionary lookup; with ahocorasick-rs (every process but the
capture hooks) two Aho-Corasick passes find the literals.
"""

from __future__ import annotations

import functools
import re

from ...lazyre import LazyPattern, lazy
from .entropy import (
    ENTROPY_CANDIDATE,
    ENTROPY_RES,
    PREFIX_TAIL,
    PREFIXED,
    entropy_values,
    looks_random,
    prefixed_tokens,
)
from .families import FAMILIES, RULES, marker
from .named import generic
from .shaped import (
    FLAG_LETTERS,
    MAILGUN,
    TWILIO_AC,
    TWILIO_SK,
    cookies,
    login_calls,
    password_flags,
    pem,
    piped_passwords,
    putty,
    schemes,
    sql_identified,
    token_rules,
    urls,
    vendor_pairs,
)
from .text import KEY_NEEDLES, KEY_RUNS, RUN_PATTERN, rare_first

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    # what the prefilter reports present and a pass skips: a needle (a str searched in the
    # text, bytes in its lowered copy) or a needle-less rule's regex
    Trigger = str | bytes | LazyPattern
    # the literals an accelerator found in the lowered text and in the text, and the key
    # needles' runs (see Scan.key_runs)
    Found = tuple[set[str], set[str], dict[bytes, list[tuple[int, int]]]]


# The steps of a pass, each with every trigger it looks for: a step none of whose triggers
# occurs is not run. A token rule's trigger is its needle, or its regex when it has none.
_PASS_STEPS = (
    (token_rules, frozenset({rule.needle or rule.regex for rule in RULES} | {".com/webhook"})),
    (vendor_pairs, frozenset({TWILIO_AC, TWILIO_SK, MAILGUN})),
    (pem, frozenset({"-----"})),
    (putty, frozenset({"Private-"})),
    (urls, frozenset({"://"})),
    (schemes, frozenset({b"bearer", b"basic", "-u", b"sig=", b"signature="})),
    (password_flags, frozenset({"-p"})),
    (sql_identified, frozenset({b"identified"})),
    (piped_passwords, frozenset({b"stdin"})),
    (cookies, frozenset({b"cookie"})),
    (login_calls, frozenset({"login("})),
    (generic, frozenset(KEY_NEEDLES)),
    (prefixed_tokens, frozenset({PREFIXED})),
    (entropy_values, frozenset(ENTROPY_RES)),
)
# Every needle and needle-less regex any pass looks for: no finding is possible without one.
_TRIGGERS: frozenset = frozenset().union(*(triggers for _, triggers in _PASS_STEPS))


@functools.lru_cache(maxsize=256)
def steps_for(skip: frozenset) -> tuple:
    return tuple(step for step, triggers in _PASS_STEPS if not triggers <= skip)


# The prefilter: which triggers occur at all. A trigger that does not occur is skipped by the
# full scan, and a text without any is returned untouched.
# "-u" only counts at the start or after whitespace (``curl -u user:pass``, ``--user``), so
# hyphenated words do not send a text down the full scan. Needles that can only match inside a
# ".com/" URL are looked for only when the text has one, "key-" only with "key" (a rule's
# ``presence``: families.within, families.after).
# Each pattern starts with a literal character, the rarest one its needles have (see
# rare_first), and patterns that start with the same character are searched as one: a scan
# costs about as much as the stops at that character. A group that matches counts all its
# triggers as present (the full scan then looks for each).
# Each entry also names its literals: every match of its pattern holds one of them (None: not
# every match holds a literal). The accelerator (see _load_accelerator) runs a search only when
# one of its literals occurs.
_RULE_SEARCHES: list[tuple[str, tuple, tuple | None]] = []
_WITHIN: dict[str, list] = {".com/": [".com/webhook"]}  # literal: needles (Teams' webhooks:
_AFTER: list[tuple[bytes, LazyPattern, str]] = []  # shaped.token_rules); (trigger,
for _rule in RULES:  # pattern, needle)
    _how: tuple = _rule.presence or ("search", rare_first(_rule.needle)[0], (_rule.needle,))
    if _how[0] == "search":
        _RULE_SEARCHES.append((_how[1], (_rule.needle or _rule.regex,), _how[2]))
    elif _how[0] == "within":
        _WITHIN.setdefault(_how[1], []).append(_rule.needle)
    else:
        _AFTER.append((_how[1], lazy(rare_first(_rule.needle)[0]), _rule.needle))
del _rule, _how
_HEX_DIGITS = "0123456789abcdef"
_PRESENCE_IN_TEXT = (
    *_RULE_SEARCHES,
    *((rare_first(n)[0], (n,), (n,)) for n in ("-----", "://", "Private-")),
    (r"AC[0-9a-f]{32}", (TWILIO_AC,), tuple(f"AC{c}" for c in _HEX_DIGITS)),
    (r"SK[0-9a-f]{32}", (TWILIO_SK,), tuple(f"SK{c}" for c in _HEX_DIGITS)),
    (MAILGUN.pattern, (MAILGUN,), None),
    ("_" + PREFIX_TAIL, (PREFIXED,), None),  # (joining a "_" search of a rule: one more look
)  # at each stop)


def _by_first_char(entries: tuple) -> tuple:
    """``(pattern, triggers, literals, c)`` per first character ``c`` of the patterns:
    ``c(?:rest|rest...)`` (a text without ``c`` is not searched: the pattern is not even
    compiled)."""
    groups: dict[str, tuple[list, list, list | None]] = {}
    for pattern, triggers, literals in entries:
        first_len = 2 if pattern[0] == "\\" else 1  # (an escaped first character)
        assert first_len == 2 or pattern[0] not in "()[]{}.^$*+?|", pattern
        rests, trigs, lits = groups.setdefault(pattern[first_len - 1], ([], [], []))
        rests.append(pattern[first_len:])
        trigs += triggers
        if literals is None or lits is None:
            groups[pattern[first_len - 1]] = (rests, trigs, None)
        else:
            lits += literals
    return tuple(
        (
            lazy(re.escape(c) + "(?:%s)" % "|".join(rests)),
            tuple(trigs),
            None if lits is None else frozenset(lits),
            c,
        )
        for c, (rests, trigs, lits) in groups.items()
    )


_PRESENCE_IN_LOW = (
    (r"b(?:earer|asic)", (b"bearer", b"basic"), ("bearer", "basic")),
    (r"=(?:(?<=sig=)|(?<=signature=))", (b"sig=", b"signature="), ("sig=", "signature=")),
    (r"identified[ \t]", (b"identified",), ("identified",)),
)
# The key names' needles are found everywhere at once: the generic rule gets their runs.
_KEY_FINDERS = tuple((r, n, n.decode()) for n, (r, _) in KEY_RUNS.items())
_TEXT_SEARCHES = _by_first_char(_PRESENCE_IN_TEXT)
_LOW_SEARCHES = tuple((lazy(p), t, frozenset(w)) for p, t, w in _PRESENCE_IN_LOW)
# (every trigger is looked for: by a search, after a literal or another trigger, or below)
assert (
    frozenset(t for _, ts, _ in _PRESENCE_IN_TEXT + _PRESENCE_IN_LOW for t in ts)
    | {n for needles in _WITHIN.values() for n in needles}
    | {n for _, _, n in _AFTER}
    | {"-u", "-p", b"stdin", b"cookie", "login(", *ENTROPY_RES, *KEY_NEEDLES}
) == _TRIGGERS
# The three kinds of flag the prefilter looks for in one pass: "-u" or "--u" at the start or
# after whitespace (curl's user, as schemes wants it), a password flag of _FLAG_PROGRAMS, and
# those that read a password from stdin (sudo -S, --password-stdin, passwd --stdin).
_SHORT_FLAGS = lazy(r"-(?:(?<=(?<!\S)-)([%sSu])|(?<=(?<!\S)--)u|(stdin))" % FLAG_LETTERS)
_FLAG_TRIGGER: dict[str, str | bytes] = {
    **dict.fromkeys(FLAG_LETTERS, "-p"),
    "u": "-u",
    "S": b"stdin",
    "stdin": b"stdin",
}
_FLAG_LITERALS = frozenset({*(f"-{c}" for c in FLAG_LETTERS + "Su"), "-stdin"})  # (every match
#                                                                                   holds one)


NOTHING: frozenset = frozenset()


# The accelerator: with ahocorasick-rs installed, one Aho-Corasick pass over an ASCII text and
# one over its lowered copy find every occurrence of the prefilter's literals (and so the key
# needles' runs), where the standard path scans once per literal or group (about 30 scans).
# Each pattern that has literals is still searched to confirm it, so the triggers found are the
# same either way. The capture hooks, which must stay on the standard library, block its import
# (see __main__) and so take the standard path.
_LOW_LITERALS = (
    *(w for _, _, w in _KEY_FINDERS),
    *(w for _, _, ws in _LOW_SEARCHES for w in ws),
    "cookie",
    "chpasswd",
)
_TEXT_LITERALS = (
    *sorted({w for _, _, ws, _ in _TEXT_SEARCHES if ws for w in ws} | _FLAG_LITERALS),
    *_WITHIN,
    "login(",
)
_KEY_OF_WORD = {word: needle for _, needle, word in _KEY_FINDERS}
_LETTER_RUN = lazy(RUN_PATTERN)
_LONGEST_LITERAL = max(map(len, _LOW_LITERALS + _TEXT_LITERALS))
_WINDOW = 1 << 16


def _load_accelerator(text: str, low: str) -> Found | None:
    """Build the accelerator and scan with it (the first scan loads it, so a process that never
    redacts pays nothing); without a working ahocorasick-rs, turn it off and return None."""
    global _accelerator
    try:
        import ahocorasick_rs

        # (bytes search faster than str; an ASCII text's bytes have the same positions)
        dfa = ahocorasick_rs.Implementation.DFA  # (the fastest to search, measured)
        find_low, find_text = (
            ahocorasick_rs.BytesAhoCorasick(
                [w.encode() for w in words], implementation=dfa
            ).find_matches_as_indexes
            for words in (_LOW_LITERALS, _TEXT_LITERALS)
        )
    except Exception:  # (not installed, blocked (see __main__) or broken)
        _accelerator = None
        return None
    key_of, letters, reach = _KEY_OF_WORD.get, _LETTER_RUN.match, _LONGEST_LITERAL - 1

    def windows(data: bytes) -> Iterator[tuple[int, bytes]]:
        """The data a window at a time, each reaching into the next by the longest literal less
        one: a text dense with literals never makes one huge list of matches."""
        if len(data) <= _WINDOW:
            yield 0, data
            return
        for start in range(0, len(data), _WINDOW):
            yield start, data[start : start + _WINDOW + reach]

    def literals_in(text: str, low: str) -> Found | None:
        """The literals in the lowered text, those in the text, and the key needles' runs; None
        for a text that is not ASCII (the standard path takes it)."""
        if not text.isascii():
            return None
        known: dict[bytes, list[tuple[int, int]]]  # (declarations only: no code runs for them)
        in_low: set[str]
        in_text: set[str]
        in_low, in_text, known = set(), set(), {}
        for window_start, window in windows(low.encode()):
            for literal_index, start, end in find_low(window, overlapping=True):
                word = _LOW_LITERALS[literal_index]
                in_low.add(word)
                needle = key_of(word)
                if needle is not None and start < _WINDOW:  # (else the next window's)
                    known.setdefault(needle, []).append(
                        (window_start + end, letters(low, window_start + end).end())
                    )
        for _, window in windows(text.encode()):
            in_text.update([_TEXT_LITERALS[i] for i, _, _ in find_text(window, overlapping=True)])
        return in_low, in_text, known

    _accelerator = literals_in
    return literals_in(text, low)


_accelerator: Callable[[str, str], Found | None] | None = _load_accelerator


def _scan_line(text: str) -> frozenset:
    """The triggers that occur in ``text`` (bytes needles case-insensitively; needle-less
    regexes that match; an entropy pattern only with a candidate that looks random). Substring
    tests run at C speed, so ordinary text is returned without the full scan."""
    return _scan_text(text)[0]


def _scan_text(text: str) -> tuple[frozenset, str, dict]:
    """_scan_line, the lowered text it used and the key needles' runs in it (see key_runs)."""
    low = text.lower()
    # The literals that occur: substrings of the text itself, or (accelerated) the set of those
    # the accelerator found; "x in" asks the same question of either.
    accelerator = _accelerator  # (read once: another thread may be loading it)
    in_low: str | set[str]  # (the text or the literals in it: "x in" asks either)
    in_text: str | set[str]
    if accelerator is None or (seen := accelerator(text, low)) is None:
        in_low, in_text = low, text
        known = {
            needle: [m.span(1) for m in run.finditer(low)]  # (str's search outruns the
            for run, needle, word in _KEY_FINDERS
            if word in low
        }  # regex engine's)
    else:
        in_low, in_text, known = seen
    found: list[Trigger] = list(known)
    for pattern, triggers, literals in _LOW_SEARCHES:
        if (
            (in_low is low or not literals.isdisjoint(in_low))
            and pattern.pattern[0] in low
            and pattern.search(low)
        ):
            found += triggers
    for pattern, triggers, literals, first in _TEXT_SEARCHES:
        if (
            (in_text is text or literals is None or not literals.isdisjoint(in_text))
            and first in text
            and pattern.search(text)
        ):
            found += triggers
    for literal, needles in _WITHIN.items():
        if literal in in_text:
            found += [n for n in needles if n in text]
    for trigger, pattern, needle in _AFTER:
        if trigger in found and pattern.search(text):
            found.append(needle)
    flags: set[str | bytes] = set()
    if (in_text is text or not _FLAG_LITERALS.isdisjoint(in_text)) and "-" in text:
        for hit in _SHORT_FLAGS.finditer(text):  # (one look at each "-" for -u, -p, sudo -S and
            flags.add(_FLAG_TRIGGER[hit.group(1) or hit.group(2) or "u"])  # --password-stdin)
            if len(flags) == 3:
                break
    found += flags
    if b"stdin" not in flags and b"pass" in found and "chpasswd" in in_low:
        found.append(b"stdin")
    if "cookie" in in_low:
        found.append(b"cookie")
    if "login(" in in_text:
        found.append("login(")
    candidate = ("=" in text or ":" in text) and ENTROPY_CANDIDATE.search(text) is not None
    for entropy_re in ENTROPY_RES:  # (most texts have no candidate; many have no "=")
        hit = entropy_re.search(text) if candidate and entropy_re.pattern[0] in text else None
        while hit:
            if looks_random(hit.group(1)):
                found.append(entropy_re)
                break
            hit = entropy_re.search(text, hit.end())
    return (frozenset(found) if found else NOTHING), low, known


# Lines seen before (prompts repeat most of theirs between calls) cost a dictionary lookup.
# Two generations stand in for an LRU cache: when the recent one is full it becomes the old one,
# and a line found in the old one moves back into the recent one.
_CACHED_LINE_CHARS = (
    4000  # (a scenario's rules are one line of ~2,500); with _LINE_CACHE_SIZE, bounds
)
#                             the cache at 2 x 4096 lines of at most 4,000 characters
_LINE_CACHE_SIZE = 4096
_LINE_CACHE: dict[str, frozenset] = {}
_LINE_CACHE_OLD: dict[str, frozenset] = {}
_PER_LINE_CHARS = 65536  # a text with a trigger in it gets its lines cached up to this size
# Lines of a multi-line text seen once (by hash): learning a line costs a scan of its own, worth
# it only for a line that comes again (a prompt re-sent with a line or two changed), not for
# every line of every tool output. So a line is learned when it is seen the second time.
_SEEN_LINES: set[int] = set()
_SEEN_LINES_SIZE = 16384


def _remember(line: str, found: frozenset) -> None:
    global _LINE_CACHE, _LINE_CACHE_OLD
    if len(line) <= _CACHED_LINE_CHARS:
        if len(_LINE_CACHE) >= _LINE_CACHE_SIZE:
            _LINE_CACHE_OLD, _LINE_CACHE = _LINE_CACHE, {}
        _LINE_CACHE[line] = found


def _recall(line: str) -> frozenset | None:
    found = _LINE_CACHE.get(line)
    if found is None:
        found = _LINE_CACHE_OLD.get(line)
        if found is not None:
            _remember(line, found)
    return found


def _forget_lines() -> None:
    """Empty the line cache (benchmarks time cold runs)."""
    _LINE_CACHE.clear()
    _LINE_CACHE_OLD.clear()
    _SEEN_LINES.clear()


def _present(text: str) -> frozenset | set:
    """The triggers that occur in ``text``.

    No needle and no needle-less regex spans a newline, so what a text holds is the union of
    what its lines hold: lines seen before are looked up, the others are scanned together.
    """
    return present_low(text)[0]


def present_low(text: str) -> tuple[frozenset | set, str | None, dict | None]:
    """_present, and ``text.lower()`` with the key needles' runs in it when they were
    computed on the way."""
    low: str | None  # (declarations only: no code runs for them)
    known: dict | None
    if "\n" not in text:
        found = _recall(text)
        if found is not None:
            return found, None, None
        found, low, known = _scan_text(text)
        _remember(text, found)
        return found, low, known
    get, old = _LINE_CACHE.get, _LINE_CACHE_OLD.get
    acc: set = set()
    fresh = []
    promote = []
    for line in text.split("\n"):
        found = get(line)
        if found is None:
            found = old(line)
            if found is None:
                fresh.append(line)
                continue
            promote.append((line, found))
        if found:
            acc.update(found)
    for line, found in promote:
        _remember(line, found)
    low = known = None
    if len(fresh) <= 4:
        for line in fresh:
            found = _scan_line(line)
            _remember(line, found)
            acc.update(found)
        return acc, low, known
    learn = len(text) <= _PER_LINE_CHARS  # (a prompt, likely to come again)
    first = fresh
    if learn and _SEEN_LINES:
        first = []
        for line in dict.fromkeys(fresh):  # (a line repeated in the text is learned once)
            if hash(line) in _SEEN_LINES:  # seen before: learn it
                found = _scan_line(line)
                _remember(line, found)
                acc.update(found)
            else:
                first.append(line)
    if first:
        joined = "\n".join(first)
        found, low, known = _scan_text(joined)
        acc.update(found)
        if len(joined) != len(text):
            low = known = None  # (positions in the joined lines, not in the text)
        if not found:
            for line in first:
                _remember(line, NOTHING)
        elif learn:
            if len(_SEEN_LINES) >= _SEEN_LINES_SIZE:
                _SEEN_LINES.clear()
            _SEEN_LINES.update(map(hash, first))
    return acc, low, known


@functools.lru_cache(maxsize=1024)
def skip_for(present: frozenset) -> frozenset:
    """The triggers a first pass skips: those that do not occur."""
    return _TRIGGERS.difference(present)


def _may_hold_secret(text: str) -> bool:
    """False when no pass could find anything: none of the needles occurs (bytes needles
    case-insensitively) and no needle-less regex matches."""
    return bool(_present(text))


@functools.cache
def needles_in_markers() -> frozenset:
    """Needles and token regexes that occur inside some marker: always rescanned. (Found on
    first use: a process that never finds a secret compiles none of these regexes.)"""
    markers = " ".join(marker(f) for f in FAMILIES)
    low = markers.lower().encode()
    inside = set()
    for trigger in _TRIGGERS:
        if isinstance(trigger, (LazyPattern, re.Pattern)):  # (a rule's regex: lazy or compiled)
            hit = trigger.search(markers) is not None
        elif isinstance(trigger, bytes):
            hit = trigger in low
        else:
            hit = trigger in markers
        if hit:
            inside.add(trigger)
        assert isinstance(trigger, (LazyPattern, re.Pattern)) or (
            "[" not in str(trigger) and "]" not in str(trigger)
        )
    return frozenset(inside)
