"""A session's known secrets (``KnownSecrets``): a value found once is redacted wherever it
appears bare in the session; between processes only salted digests are kept.
"""

from __future__ import annotations

import contextvars
import functools
import re

from ...lazyre import lazy
from .engine import SESSION, apply, merged_spans, redact_obj
from .families import FAMILIES, MARKER_PREFIX, PRIO, Span
from .text import QUOTES, escape_ends_at

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable


# --------------------------------------------------------------------------------------------
# A session's known secrets: a value found once is a secret wherever it appears in the session

BARE_MIN = 8          # characters: shorter values are too often words, numbers, flags
BARE_MAX = 512
_NOT_WORD = lazy(r"\W")
# what a value looked for bare never holds: whitespace, quotes, brackets, commas (a value the
# rules find ends at them anyway), so that text is searched a run between them at a time
_VALUE_RUN = lazy(r"[^\s\"'`(){}\[\]<>,]{%d,}" % BARE_MIN)
_ESCAPE_END = lazy(r"\\[nrt]|\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}")


@functools.lru_cache(maxsize=None)
def _blake2b() -> Callable:
    """BLAKE2b, imported on first use, from its own module: ``hashlib`` also loads OpenSSL,
    which costs a capture hook a few milliseconds for nothing."""
    try:
        from _blake2 import blake2b
    except ImportError:                     # (a Python built without it)
        from hashlib import blake2b
    return blake2b


def bare_worthy(value: str) -> bool:
    """Whether a secret found under a key is also redacted where it appears alone: at least
    BARE_MIN characters without whitespace, quotes, brackets or commas; letters alone from 16
    characters and digits alone from 12 only. ``password: postgres`` must not turn every "postgres" of the session into a
    marker, nor ``pin: 20251130`` every date; ``hunter22``, ``pw-5f3a…`` or a token are
    unlikely to be anything but the secret."""
    n = len(value)
    if not BARE_MIN <= n <= BARE_MAX or MARKER_PREFIX in value:
        return False
    if value.isalpha():
        return n >= 16
    if value.isdigit():
        return n >= 12
    return _VALUE_RUN.fullmatch(value) is not None


def _word_at(text: str, i: int) -> bool:
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")


def _bare_at(text: str, s: int, e: int) -> bool:
    """Whether ``text[s:e]`` stands alone: it cuts no run of letters, digits and underscores
    (a token right after a \\n, \\u003d or %3D escape stands alone too)."""
    return ((not (_word_at(text, s - 1) and _word_at(text, s)) or escape_ends_at(text, s))
            and not (_word_at(text, e - 1) and _word_at(text, e)))


class KnownSecrets:
    """The secrets found so far in one session, to redact wherever they appear bare.

    ``DB_PASSWORD=pw-5f3a…`` in one command makes ``pw-5f3a…`` a secret in a later log line,
    an error message that becomes a pattern's key, or a sentence that becomes a lesson. Inside
    ``with known:`` every ``redact`` (and ``redact_obj``) adds what it finds (``learn``, when
    ``bare_worthy``) and replaces bare occurrences of what was found before (``scrub``) with
    the marker of the family it was found as.

    Only salted digests persist (``new``: BLAKE2b keyed with ``salt``, per value length), so
    what a session keeps on disk holds no value; a process that saw a value itself holds it
    in memory too and finds it by search, the others hash the text's candidate tokens.
    """

    def __init__(self, salt: bytes, saved: Iterable[tuple[int, str, bytes]] = ()):
        self.salt = bytes(salt)
        self.new: list[tuple[int, str, bytes]] = []     # learned here, not saved yet
        self._digests: dict[int, dict[bytes, str]] = {}  # length: digest: family
        self._values: dict[str, str] = {}               # value: family (this process only)
        self._covered: set[bytes] = set()               # digests of the values held
        self._search: Callable | None = None
        self._unmatched: dict[int, dict[bytes, str]] | None = None
        self._tokens: list[contextvars.Token] = []
        self.scrubbing = True                           # (off while only learning)
        for length, family, digest in saved:
            self._digests.setdefault(int(length), {}).setdefault(bytes(digest), family)

    def __bool__(self) -> bool:
        return bool(self._digests)

    def __len__(self) -> int:
        return sum(map(len, self._digests.values()))

    def __enter__(self) -> KnownSecrets:
        self._tokens.append(SESSION.set(self))
        return self

    def __exit__(self, *exc_info) -> None:
        SESSION.reset(self._tokens.pop())

    def digest(self, value: str) -> bytes:
        return _blake2b()(value.encode("utf-8", "surrogatepass"), key=self.salt[:64],
                          digest_size=16).digest()

    def saved(self, salt: bytes | None = None) -> list[tuple[int, str, bytes]]:
        """What to save: ``new``, or under another ``salt`` (another process saved the session's
        salt first) the values this process holds."""
        if salt is None or bytes(salt) == self.salt:
            return list(self.new)
        other = KnownSecrets(salt)
        return [(len(v), f, other.digest(v)) for v, f in self._values.items()]

    def learn(self, value: str, family: str) -> bool:
        """Remember ``value``, found as a secret of ``family``, when it is ``bare_worthy``; True
        when the session did not know it."""
        if value in self._values or not bare_worthy(value):
            return False
        d = self.digest(value)
        self._values[value] = family if family in PRIO else "generic-secret"
        self._covered.add(d)
        self._search = self._unmatched = None
        known = self._digests.setdefault(len(value), {})
        if d in known:
            return False
        known[d] = self._values[value]
        self.new.append((len(value), known[d], d))
        return True

    def learn_from(self, value: Any) -> None:
        """Learn the secrets the redactor finds in ``value`` (a string or a structure), and
        replace nothing: what an event saw, learned before its captures are redacted."""
        scrubbing, self.scrubbing = self.scrubbing, False
        try:
            with self:
                redact_obj(value)
        finally:
            self.scrubbing = scrubbing

    def learn_spans(self, text: str, spans: Iterable[Span]) -> None:
        """Learn the values of the redactor's findings (a private key's lines excepted)."""
        for s, e, p in spans:
            if p != PRIO["private-key"] and e - s >= BARE_MIN:
                for piece in text[s:e].split():
                    self.learn(piece.strip(QUOTES), FAMILIES[p])

    def spans(self, text: str) -> list[Span]:
        """Where known secrets stand bare in ``text``, merged."""
        found: list[Span] = []
        if self._values:
            if self._search is None:
                self._search = re.compile("|".join(
                    map(re.escape, sorted(self._values, key=len, reverse=True)))).search
            m, search = self._search(text), self._search
            while m:
                s, e = m.span()
                if _bare_at(text, s, e):
                    found.append((s, e, PRIO[self._values[m.group()]]))
                    m = search(text, e)
                else:
                    m = search(text, s + 1)
        if self._unmatched is None:
            self._unmatched = {n: left for n, ds in self._digests.items()
                               if (left := {d: f for d, f in ds.items()
                                            if d not in self._covered})}
        if self._unmatched and len(text) >= BARE_MIN:
            found += self._hashed(text)
        return merged_spans(found) if len(found) > 1 else found

    def _hashed(self, text: str) -> list[Span]:
        """The candidate tokens of ``text`` whose digest is known: within each run a value
        could lie in (``_VALUE_RUN``), every span of a known length that cuts no word and
        could have been learned (``bare_worthy``)."""
        found: list[Span] = []
        digest, unmatched = self.digest, self._unmatched
        shortest = min(unmatched)
        for m in _VALUE_RUN.finditer(text):
            a, run = m.start(), m.group()
            n = len(run)
            if n < shortest:
                continue
            ends = {0, n}
            for w in _NOT_WORD.finditer(run):
                ends.add(w.start())
                ends.add(w.end())
            starts = ends
            if "\\" in run or "%" in run:
                starts = ends | {e.end() for e in _ESCAPE_END.finditer(run)}
            for length, known in unmatched.items():
                if length > n:
                    continue
                for e in ends.intersection(map(length.__add__, starts)):
                    if bare_worthy(piece := run[e - length:e]) and (d := digest(piece)) in known:
                        found.append((a + e - length, a + e,
                                      PRIO.get(known[d], PRIO["generic-secret"])))
        return found

    def scrub(self, text: str) -> str:
        """``text`` with every bare occurrence of a known secret replaced by its marker."""
        spans = self.spans(text)
        return apply(text, spans)[0] if spans else text
