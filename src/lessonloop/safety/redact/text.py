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

    def rank(c: str) -> int:
        r = _RARITY.find(c) % (len(_RARITY) + 1)  # (not listed: common)
        return max(r, _RARITY.find(c.upper()) % (len(_RARITY) + 1)) if folded else r

    i = min(range(len(needle)), key=lambda k: rank(needle[k]))
    pattern = re.escape(needle[i:])
    return (pattern + "(?<=%s)" % re.escape(needle) if i else pattern), i


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
            found, i = [], hay.find(lit)
            while i != -1:
                found.append(i)
                i = hay.find(lit, i + 1)
            return found

        return positions
    pattern, i = rare_first(word, folded=word is not needle)
    if any(word[:k] == word[-k:] for k in range(1, len(word))):  # it can overlap itself:
        pattern = re.escape(word[i]) + ("(?<=%s)" % re.escape(word[: i + 1]) if i else "")
        if word[i + 1 :]:  # consume one character
            pattern += "(?=%s)" % re.escape(word[i + 1 :])
    finditer = re.compile(pattern if in_str else pattern.encode()).finditer
    return lambda hay: [m.start() - i for m in finditer(hay)]


def has_digit(s: str) -> bool:
    return any(c.isdigit() for c in s)


def has_upper_and_lower(s: str) -> bool:
    return any(c.isupper() for c in s) and any(c.islower() for c in s)


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


def line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j == -1 else j


def line_prefix_blank(text: str, ks: int) -> bool:
    """Only indentation (or a YAML list dash) before position ``ks`` on its line (a ``\\n``
    escape in JSON-escaped text starts a line too)."""
    while True:  # (256 characters at a time: a line can be long)
        lo = max(0, ks - 256)
        ls = text.rfind("\n", lo, ks) + 1 or lo
        k = text.rfind("\\n", ls, ks)
        if text[ls if k == -1 else k + 2 : ks].strip(" \t-"):
            return False
        if k != -1 or ls != lo or lo == 0:
            return True
        ks = lo


# JSON-escaped text (transcripts are JSON lines): a value never runs on over a \n, \r, \t or \"
# escape, nor over the quote that closes the JSON string it sits in.
_ESC_SAFE = lazy(r"(?:[^\\]|\\[^nrt\"])*+")
_ESC_NL_SAFE = lazy(r"(?:[^\\\n]|\\[^nr\n])*+")
_JSON_QUOTE = lazy(r'\\.|"')


def escape_before(text: str, i: int) -> bool:
    """Whether ``text[i]`` is the letter of a \\n, \\r or \\t escape (JSON-escaped text)."""
    return (
        i > 0 and text[i - 1] == "\\" and text[i] in "nrt" and not (i > 1 and text[i - 2] == "\\")
    )


_HEX = frozenset("0123456789abcdefABCDEF")


def escape_ends_at(text: str, h: int) -> bool:
    """Whether an escape ends just before ``text[h]``: \\n, \\r or \\t (JSON), \\u003d
    (JSON, Go) or %3D (URL). Its last character is a letter or digit, yet it is no part of the
    word that follows, so a token there still starts a token."""
    if h >= 2 and escape_before(text, h - 1):
        return True
    if h >= 6 and text[h - 6] == "\\" and text[h - 5] == "u" and _HEX.issuperset(text[h - 4 : h]):
        return True
    return h >= 3 and text[h - 3] == "%" and _HEX.issuperset(text[h - 2 : h])


def logical_line_start(text: str, i: int, limit: int) -> int:
    """Start of the line holding ``i`` (after a newline or a \\n escape), at most ``limit``
    characters back."""
    lo = max(0, i - limit)
    ls = text.rfind("\n", lo, i) + 1 or lo
    k = text.rfind("\\n", ls, i)
    return ls if k == -1 else k + 2


def esc_cut(v: str) -> str:
    """``v`` up to its first \\n, \\r, \\t or \\" escape (or a trailing lone backslash)."""
    return v[: _ESC_SAFE.match(v).end()] if "\\" in v else v


def value_limit(text: str, i: int) -> int:
    """Where a value that runs "to the end of its line" from ``i`` ends: the line's end, or in
    JSON-escaped text the first \\n or \\r escape, or the closing quote of the JSON string
    that ``i`` is inside of."""
    end = line_end(text, i)
    if text.find("\\", i, end) != -1:
        end = _ESC_NL_SAFE.match(text, i, end).end()
    if text.find('"', i, end) != -1:
        ls = text.rfind("\n", 0, i) + 1
        inside = sum(1 for q in _JSON_QUOTE.findall(text, ls, i) if q == '"') % 2
        if inside:
            for m in _JSON_QUOTE.finditer(text, i, end):
                if m.group() == '"':
                    return m.start()
    return end


def back_over_url(text: str, s: int) -> int:
    """Extend a match that starts inside a URL's host back over the host and the scheme."""
    i, lim = s, max(0, s - 100)
    while i > lim and text[i - 1] in _HOSTCH:
        i -= 1
    if text.startswith("://", i - 3):
        j, lim = i - 3, max(0, i - 35)
        while j > lim and text[j - 1] in SCHEMECH:
            j -= 1
        if j < i - 3:
            return j
    return i


def close_quote(text: str, start: int, quote: str) -> int:
    """Index of the closing ``quote`` on the same line (backslash escapes honoured), else the
    line's end: a value whose closing quote was cut off is redacted to the end of its line
    (in JSON-escaped text, to the end of its JSON string: see value_limit)."""
    j = text.find(quote, start)
    if (
        j != -1
        and text.find("\n", start, j) == -1
        and (len(quote) == 2 or text.find("\\", start, j) == -1)
    ):
        return j  # the common case, without a look at the whole line
    if len(quote) == 2:  # \" inside a JSON string
        return value_limit(text, start)
    end = line_end(text, start)
    i = start
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i
        i += 1
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
for _n in KEY_NEEDLES:
    _p = rare_first(_n.decode(), folded=True)[0] + "(?=(%s))" % RUN_PATTERN
    KEY_RUNS[_n] = (lazy(_p), lazy(_p.encode()))
del _n, _p
assert not any(a != b and a.startswith(b) for a in KEY_NEEDLES for b in KEY_NEEDLES)
