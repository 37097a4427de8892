"""What every detector reads a text with: character classes; where a line, an escape, a quoted
value or a URL's host begins and ends, in plain and in JSON-escaped text; how a literal is
searched from its rarest character; and one pass's view of a text (``Scan``).
"""

from __future__ import annotations

import functools
import re

from ...lazyre import LazyPattern, lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    # A str or bytes of the kind ``Scan.low`` is (a str for an ASCII text, else bytes): the
    # code picks it at run time (``low.__class__ is str``), which a type checker cannot follow.
    LowKind = Any


# --------------------------------------------------------------------------------------------
# Small helpers

LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
ALNUM = LETTERS | frozenset("0123456789")
WORD = ALNUM | {"_"}
TOKCH = WORD | {"-"}  # base64url / token characters
_HOSTCH = ALNUM | {".", "-"}
SCHEMECH = ALNUM | {"+", ".", "-"}
QUOTES = "\"'`"


# sre looks for a pattern's first character and stops at each occurrence of it to try the rest,
# so a literal is searched from its rarest character (the ones before it checked by a
# look-behind). Characters from rare to common in transcripts (English, code, JSON):
_RARITY = (
    '*|#@$!?`QV<X+%GJzZW;KHFBYLU>DMCq[]PjNIAROSExT{}()=k/vwb9yg876f5h34_,m2-01puc:l.di\\raos"nte '
)


def rare_first(needle: str, folded: bool = False) -> tuple[str, int]:
    """A regex matching ``needle`` from its rarest character on, and that character's offset in
    ``needle`` (where the match starts). ``folded``: it searches lowered text (where "k" also
    stands for "K")."""

    def rank(char: str) -> int:
        rarity = _RARITY.find(char) % (len(_RARITY) + 1)  # (not listed: common)
        return max(rarity, _RARITY.find(char.upper()) % (len(_RARITY) + 1)) if folded else rarity

    start = min(range(len(needle)), key=lambda k: rank(needle[k]))
    pattern = re.escape(needle[start:])
    return (pattern + "(?<=%s)" % re.escape(needle) if start else pattern), start


@functools.cache
def _hit_finder(needle: str | bytes, in_str: bool) -> Callable[[LowKind], list[int]]:
    """A function giving the positions of every occurrence of ``needle`` (the overlapping ones
    of a needle such as "-----" too). ``in_str``: it searches a str (a bytes needle: the lowered
    text as a str), else bytes. str.find skips ahead by about the needle's length, so it finds
    long needles faster than the regex engine, which finds short ones from their rarest
    character."""
    word = needle.decode() if isinstance(needle, bytes) else needle
    if len(word) >= 5:
        lit = word if in_str else word.encode()

        def positions(hay: LowKind) -> list[int]:
            found, pos = [], hay.find(lit)
            while pos != -1:
                found.append(pos)
                pos = hay.find(lit, pos + 1)
            return found

        return positions
    pattern, start = rare_first(word, folded=word is not needle)
    if any(word[:k] == word[-k:] for k in range(1, len(word))):  # it can overlap itself:
        pattern = re.escape(word[start]) + (
            "(?<=%s)" % re.escape(word[: start + 1]) if start else ""
        )
        if word[start + 1 :]:  # consume one character
            pattern += "(?=%s)" % re.escape(word[start + 1 :])
    finditer = re.compile(pattern if in_str else pattern.encode()).finditer
    return lambda hay: [m.start() - start for m in finditer(hay)]


def has_digit(text: str) -> bool:
    return any(c.isdigit() for c in text)


def has_upper_and_lower(text: str) -> bool:
    return any(c.isupper() for c in text) and any(c.islower() for c in text)


class Scan:
    """One pass's view of the text: the text, a lowered copy (same positions) for
    case-insensitive needles, and which needles are known to be absent.

    ``skip`` holds the needles known to be absent before the pass starts: those the prefilter
    did not find in the text, and in a confirming pass those the first pass found nowhere. A
    needle found nowhere in one pass cannot appear in the next unless it occurs inside a
    marker: no needle contains "[" or "]", so an occurrence after replacement lies either inside
    a marker or wholly inside text that was already there. The confirming pass therefore only
    rescans needles that occurred (or that markers contain).
    """

    __slots__ = ("text", "_low", "skip", "absent", "known")

    def __init__(
        self,
        text: str,
        skip: frozenset = frozenset(),
        low: str | bytes | None = None,
        known: dict | None = None,
    ):
        self.text = text
        self._low = low
        self.skip = skip
        self.absent: set = set()
        self.known = known  # key needles' runs (see key_runs), found by the prefilter

    @property
    def low(self) -> LowKind:
        """The text lowered with one character per character: ``str.lower()`` when the text is
        ASCII, else its ASCII-lowered bytes (anything else becomes "?")."""
        if self._low is None:
            self._low = (
                self.text.lower()
                if self.text.isascii()
                else self.text.encode("ascii", "replace").lower()
            )
        return self._low

    def hits(self, needle: str | bytes) -> list[int]:
        """Positions of ``needle``: a str is searched in the text, bytes in the lowered copy."""
        if needle in self.skip:
            return []
        hay = self.text if needle.__class__ is str else self.low
        found = _hit_finder(needle, hay.__class__ is str)(hay)
        if not found:
            self.absent.add(needle)
        return found

    def key_runs(self, needle: bytes) -> list[tuple[int, int]]:
        """The hits of a key needle (in the lowered copy) as the span of the ASCII letters right
        after each (at most RUN_MAX of them): ``(end of the needle, end of the letters)``."""
        if needle in self.skip:
            return []
        if self.known and needle in self.known:
            return self.known[needle]
        low = self.low
        finditer = KEY_RUNS[needle][low.__class__ is bytes].finditer
        runs = [m.span(1) for m in finditer(low)]
        if not runs:
            self.absent.add(needle)
        return runs

    def matches(self, regex: LazyPattern | re.Pattern[str]) -> list[re.Match[str]]:
        if regex in self.skip:
            return []
        found = list(regex.finditer(self.text))
        if not found:
            self.absent.add(regex)
        return found

    def next_skip(self) -> frozenset:
        """What the next pass may skip, before the needles that markers hold are put back
        (the engine knows those)."""
        return self.skip | self.absent


def line_end(text: str, pos: int) -> int:
    newline = text.find("\n", pos)
    return len(text) if newline == -1 else newline


def line_prefix_blank(text: str, key_start: int) -> bool:
    """Only indentation (or a YAML list dash) before position ``key_start`` on its line (a ``\\n``
    escape in JSON-escaped text starts a line too)."""
    while True:  # (256 characters at a time: a line can be long)
        window_start = max(0, key_start - 256)
        line_start = text.rfind("\n", window_start, key_start) + 1 or window_start
        escape = text.rfind("\\n", line_start, key_start)
        if text[line_start if escape == -1 else escape + 2 : key_start].strip(" \t-"):
            return False
        if escape != -1 or line_start != window_start or window_start == 0:
            return True
        key_start = window_start


# JSON-escaped text (transcripts are JSON lines): a value never runs on over a \n, \r, \t or \"
# escape, nor over the quote that closes the JSON string it sits in.
_ESC_SAFE = lazy(r"(?:[^\\]|\\[^nrt\"])*+")
_ESC_NL_SAFE = lazy(r"(?:[^\\\n]|\\[^nr\n])*+")
_JSON_QUOTE = lazy(r'\\.|"')


def escape_before(text: str, pos: int) -> bool:
    """Whether ``text[pos]`` is the letter of a \\n, \\r or \\t escape (JSON-escaped text)."""
    return (
        pos > 0
        and text[pos - 1] == "\\"
        and text[pos] in "nrt"
        and not (pos > 1 and text[pos - 2] == "\\")
    )


_HEX = frozenset("0123456789abcdefABCDEF")


def escape_ends_at(text: str, pos: int) -> bool:
    """Whether an escape ends just before ``text[pos]``: \\n, \\r or \\t (JSON), \\u003d
    (JSON, Go) or %3D (URL). Its last character is a letter or digit, yet it is no part of the
    word that follows, so a token there still starts a token."""
    if pos >= 2 and escape_before(text, pos - 1):
        return True
    if (
        pos >= 6
        and text[pos - 6] == "\\"
        and text[pos - 5] == "u"
        and _HEX.issuperset(text[pos - 4 : pos])
    ):
        return True
    return pos >= 3 and text[pos - 3] == "%" and _HEX.issuperset(text[pos - 2 : pos])


def logical_line_start(text: str, pos: int, limit: int) -> int:
    """Start of the line holding ``pos`` (after a newline or a \\n escape), at most ``limit``
    characters back."""
    limit_start = max(0, pos - limit)
    line_start = text.rfind("\n", limit_start, pos) + 1 or limit_start
    escape = text.rfind("\\n", line_start, pos)
    return line_start if escape == -1 else escape + 2


def esc_cut(value: str) -> str:
    """``value`` up to its first \\n, \\r, \\t or \\" escape (or a trailing lone backslash)."""
    return value[: _ESC_SAFE.match(value).end()] if "\\" in value else value


def value_limit(text: str, pos: int) -> int:
    """Where a value that runs "to the end of its line" from ``pos`` ends: the line's end, or in
    JSON-escaped text the first \\n or \\r escape, or the closing quote of the JSON string
    that ``pos`` is inside of."""
    end = line_end(text, pos)
    if text.find("\\", pos, end) != -1:
        end = _ESC_NL_SAFE.match(text, pos, end).end()
    if text.find('"', pos, end) != -1:
        line_start = text.rfind("\n", 0, pos) + 1
        inside = sum(1 for q in _JSON_QUOTE.findall(text, line_start, pos) if q == '"') % 2
        if inside:
            for found in _JSON_QUOTE.finditer(text, pos, end):
                if found.group() == '"':
                    return found.start()
    return end


def back_over_url(text: str, start: int) -> int:
    """Extend a match that starts inside a URL's host back over the host and the scheme."""
    pos, lim = start, max(0, start - 100)
    while pos > lim and text[pos - 1] in _HOSTCH:
        pos -= 1
    if text.startswith("://", pos - 3):
        scheme_start, lim = pos - 3, max(0, pos - 35)
        while scheme_start > lim and text[scheme_start - 1] in SCHEMECH:
            scheme_start -= 1
        if scheme_start < pos - 3:
            return scheme_start
    return pos


def close_quote(text: str, start: int, quote: str) -> int:
    """Index of the closing ``quote`` on the same line (backslash escapes honoured), else the
    line's end: a value whose closing quote was cut off is redacted to the end of its line
    (in JSON-escaped text, to the end of its JSON string: see value_limit)."""
    closing = text.find(quote, start)
    if (
        closing != -1
        and text.find("\n", start, closing) == -1
        and (len(quote) == 2 or text.find("\\", start, closing) == -1)
    ):
        return closing  # the common case, without a look at the whole line
    if len(quote) == 2:  # \" inside a JSON string
        return value_limit(text, start)
    end = line_end(text, start)
    pos = start
    while pos < end:
        char = text[pos]
        if char == "\\":
            pos += 2
            continue
        if char == quote:
            return pos
        pos += 1
    return value_limit(text, start)


# --------------------------------------------------------------------------------------------
# Generic key/value secrets: the name stays, the value goes

# (Sentry DSNs need no "dsn" needle: their 32-hex key is caught in the URL itself.)
KEY_NEEDLES = (b"pass", b"pwd", b"secret", b"token", b"auth", b"cred", b"key")


# The prefilter finds each key needle with the ASCII letters right after it (their end, at most
# RUN_MAX of them): _weak_hit reads nothing beyond those letters and the character after them,
# so whether a hit is strong is kept per run of letters (no needle starts another: the run
# tells its needle). A hit whose letters go on past RUN_MAX is judged on the text itself.
RUN_MAX = 32
RUN_PATTERN = "[a-z]{0,%d}+" % RUN_MAX  # the ASCII letters after a needle
KEY_RUNS = {}  # needle: (str regex, bytes regex)
for _needle in KEY_NEEDLES:
    _pattern = rare_first(_needle.decode(), folded=True)[0] + "(?=(%s))" % RUN_PATTERN
    KEY_RUNS[_needle] = (lazy(_pattern), lazy(_pattern.encode()))
del _needle, _pattern
assert not any(a != b and a.startswith(b) for a in KEY_NEEDLES for b in KEY_NEEDLES)
