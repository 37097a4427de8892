"""The scan engine: one pass runs the detectors the prefilter lets through and merges their
spans; ``redact`` repeats the pass over the lines that changed until nothing does, so
``redact(redact(x)) == redact(x)``; ``find_secrets`` reports the first pass; ``redact_obj``
redacts structures, where a key is the context that makes its value a secret. And a session's
known secrets (``KnownSecrets``): a value found once is redacted wherever it appears bare in the
session; between processes only salted digests are kept.
"""

from __future__ import annotations

import contextvars
import functools
import re

from ...lazyre import lazy
from .entropy import ENTROPY_ID, entropy_safe_name, looks_random
from .families import FAMILIES, MARKER_PREFIX, MARKER_RE, PRIO, Span, marker
from .lexicon import classify, placeholder
from .named import short_word
from .prefilter import NOTHING, needles_in_markers, present_low, skip_for, steps_for
from .text import QUOTES, Scan, escape_ends_at

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any


_MAX_PASSES = 6


# --------------------------------------------------------------------------------------------
# The pass, merging, and the public API


def _collect(
    text: str, skip: frozenset = frozenset(), low: str | None = None, known: dict | None = None
) -> tuple[list[Span], frozenset]:
    """One pass: merged spans, and what the next pass over the redacted text may skip (when
    there is one).
    (``low``: ``text.lower()`` when already known and ``text`` is ASCII; ``known``: the key
    needles' runs in it, see Scan.key_runs.)"""
    scan = Scan(text, skip, low, known)
    found: list[Span] = []
    for step in steps_for(skip):
        step(scan, found)
    found = [f for f in found if f[1] > f[0] and not text.startswith(MARKER_PREFIX, f[0])]
    if not found:
        return found, NOTHING  # (no next pass)
    return merged_spans(found), scan.next_skip() - needles_in_markers()


def merged_spans(found: list[Span]) -> list[Span]:
    """Overlapping spans as one, sorted; a merged span keeps the most specific family."""
    found.sort()
    merged = [found[0]]
    for start, end, prio in found[1:]:
        last_start, last_end, last_prio = merged[-1]
        if start < last_end:
            merged[-1] = (last_start, max(last_end, end), min(last_prio, prio))
        else:
            merged.append((start, end, prio))
    return merged


def apply(text: str, spans: list[Span]) -> tuple[str, list[tuple[int, int]]]:
    """The text with the spans replaced by markers, and where those markers now are."""
    parts, pos, out, marks = [], 0, 0, []
    for start, end, prio in spans:
        parts.append(text[pos:start])
        mark = marker(FAMILIES[prio])
        out += start - pos
        marks.append((out, out + len(mark)))
        out += len(mark)
        parts.append(mark)
        pos = end
    parts.append(text[pos:])
    return "".join(parts), marks


def _recheck(text: str, marks: list[tuple[int, int]], skip: frozenset) -> list[Span]:
    """The confirming pass: what a full pass over ``text`` would find, looking only at the
    lines that hold the markers the previous pass put in.

    Everything else is unchanged, and every rule reads one line, except private-key blocks
    (whose BEGIN and END lines a pass never leaves behind: markers cannot form them) and YAML
    block scalars (a key whose indented lines follow it): so a line with a marker is rechecked
    together with the indented lines after it. Each window ends with its newline, so the end
    of a window is never mistaken for the end of the text.
    """
    text_len = len(text)
    windows: list[list[int]] = []
    for mark_start, mark_end in marks:
        if windows and mark_start < windows[-1][1]:
            continue
        window_start = text.rfind("\n", 0, mark_start) + 1
        window_end = text.find("\n", mark_end)
        window_end = text_len if window_end == -1 else window_end + 1
        while window_end < text_len and text[window_end] in " \t\n":  # the indented lines after it
            nxt = text.find("\n", window_end)
            window_end = text_len if nxt == -1 else nxt + 1
        if windows and window_start <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], window_end)
        else:
            windows.append([window_start, window_end])
    if sum(we - ws for ws, we in windows) * 2 > text_len:
        return _collect(text, skip)[0]
    spans: list[Span] = []
    for window_start, window_end in windows:
        spans += [
            (s + window_start, e + window_start, p)
            for s, e, p in _collect(text[window_start:window_end], skip)[0]
        ]
    return spans


def find_secrets(text: str) -> list[tuple[str, int, int]]:
    """``(family, start, end)`` of every secret found in one pass over ``text``.

    Overlapping findings are merged. (``redact`` may take a second pass when one secret
    hid the boundary of another; this reports the first.)
    """
    if not isinstance(text, str):
        raise TypeError(f"find_secrets() needs str, not {type(text).__name__}")
    return [(FAMILIES[p], s, e) for s, e, p in _collect(text)[0]]


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<family>]``; inside
    ``with known:`` (a session's ``KnownSecrets``) also every bare occurrence of a secret found
    before in that session, and what it finds is added to ``known``."""
    if not isinstance(text, str):
        raise TypeError(f"redact() needs str, not {type(text).__name__}")
    session = SESSION.get()
    text = _redact(text, session)
    return session.scrub(text) if session and session.scrubbing else text


def _redact(text: str, session: KnownSecrets | None) -> str:
    present, low, known = present_low(text)
    if not present:
        return text
    if not text.isascii():
        low = known = None  # (str.lower() may change non-ASCII lengths)
    spans, skip = _collect(text, skip_for(frozenset(present)), low, known)
    for done in range(1, _MAX_PASSES + 1):
        if not spans:
            break
        if session is not None:
            session.learn_spans(text, spans)
        text, marks = apply(text, spans)
        if done < _MAX_PASSES:
            spans = _recheck(text, marks, skip)
    if ("&" in text or "\\u00" in text) and _ENTITY.search(text):
        spans = _encoded_secrets(text)
        if spans:
            text = apply(text, spans)[0]
    return text


# Quotes and brackets written as HTML entities or \u00XX escapes: {&quot;password&quot;: ...}
# in an HTML test report, \u003cpassword\u003e... in Go's JSON.
_ENTITY_CHARS = {
    "&quot;": '"',
    "&#34;": '"',
    "&#x22;": '"',
    "&apos;": "'",
    "&#39;": "'",
    "&#x27;": "'",
    "&lt;": "<",
    "&gt;": ">",
    "&amp;": "&",
    "\\u0022": '"',
    "\\u0027": "'",
    "\\u003c": "<",
    "\\u003e": ">",
    "\\u0026": "&",
    "\\u003d": "=",
}
_ENTITY = lazy(r"&(?:quot|apos|lt|gt|amp|#34|#39|#x22|#x27);|\\u00(?:22|27|3[cCdDeE]|26)")


def _encoded_secrets(text: str) -> list[Span]:
    """The spans, in ``text``, of the secrets found once its entities and escapes are read as
    the characters they stand for (a span covers the encoded form of what it found)."""
    parts: list[str]  # (declarations only: no code runs for them)
    where: list[int]
    parts, where, pos = [], [], 0
    for entity in _ENTITY.finditer(text):
        parts.append(text[pos : entity.start()])
        where.extend(range(pos, entity.start()))
        parts.append(_ENTITY_CHARS[entity.group().lower()])
        where.append(entity.start())
        pos = entity.end()
    parts.append(text[pos:])
    where.extend(range(pos, len(text) + 1))  # (and the end, for a span's end)
    return [(where[s], where[e], p) for s, e, p in _collect("".join(parts))[0]]


def _secret_key(key: Any) -> str | None:
    if not isinstance(key, str) or len(key) > 200:
        return None
    name = MARKER_RE.sub(" ", key).strip(" \t\"'.-")
    if name.lower().endswith("authorization"):
        return "authorization-header"
    return classify(name)


_LOOSE_NAME_FAMILIES = frozenset(
    {"generic-secret", "cloudflare-token", "twilio-key", "sendgrid-key", "mailgun-key"}
)


def _secret_value(family: str, key: str, value: Any) -> bool:
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped or placeholder(stripped) or MARKER_RE.fullmatch(stripped):
            return False
        if family in _LOOSE_NAME_FAMILIES and short_word(
            stripped, key if isinstance(key, str) else ""
        ):
            return False  # {"token": "Hello"}: a tokenizer's
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return family == "password" and key.strip().lower() != "pass"
    return False


_ENTROPY_VALUE = lazy(r"[A-Za-z0-9+/_.~-]{24,256}+={0,3}+")


def _random_value_under(key: Any, value: Any) -> bool:
    """The high-entropy fallback in a structure: a random token stored under a name that does
    not say it is an id, a digest, a signature or a public key."""
    return (
        isinstance(value, str)
        and _ENTROPY_VALUE.fullmatch(value) is not None
        and ENTROPY_ID.match(value) is None
        and looks_random(value)
        and not (isinstance(key, str) and entropy_safe_name(key))
    )


def redact_obj(value: Any) -> Any:
    """A copy of ``value`` with every string inside dicts, lists, tuples and sets redacted.

    A value stored under a secret-looking key (``{"password": "hunter2"}``) is replaced whole:
    in a structure the key is the only context saying the value is a secret. Under generic
    names (token, secret, api_key, ...) that takes a string of 8+ characters without spaces,
    so a tokenizer's ``{"token": "Hello", "logprob": -0.3}`` stays; under password names any
    string, or a number (a PIN), except for a bare ``pass`` count. Under any other name but an
    id's, digest's or signature's, a random token is replaced too (the high-entropy fallback).
    Keys are redacted too. Other objects are returned unchanged.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        out = {}
        # {"name": "DB_PASSWORD", "value": ...}: Kubernetes env, AWS parameters, Postman
        named = next(
            (value[f] for f in ("name", "Name", "key", "Key") if isinstance(value.get(f), str)),
            None,
        )
        named_family = _secret_key(named) if named is not None else None
        for key, item in value.items():
            family = _secret_key(key) or (named_family if key in ("value", "Value") else None)
            if family and _secret_value(family, key, item):
                whole = redact(item).strip() if isinstance(item, str) else ""
                _learn(item, family)
                out[redact_obj(key)] = whole if MARKER_RE.fullmatch(whole) else marker(family)
            elif _random_value_under(key, item):
                _learn(item, "generic-secret")
                out[redact_obj(key)] = marker("generic-secret")
            else:
                out[redact_obj(key)] = redact_obj(item)
        return out
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    if isinstance(value, tuple):
        items = [redact_obj(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, (set, frozenset)):
        return type(value)(redact_obj(v) for v in value)
    return value


SESSION: contextvars.ContextVar = contextvars.ContextVar("lessonloop_known_secrets", default=None)


def _learn(value: Any, family: str) -> None:
    """Inside ``with known:``, learn a value a structure keeps under a secret's name."""
    session = SESSION.get()
    if session is not None and isinstance(value, str):
        for piece in value.split():
            session.learn(piece.strip(QUOTES), family)


# --------------------------------------------------------------------------------------------
# A session's known secrets: a value found once is a secret wherever it appears in the session

BARE_MIN = 8  # characters: shorter values are too often words, numbers, flags
BARE_MAX = 512
_NOT_WORD = lazy(r"\W")
# what a value looked for bare never holds: whitespace, quotes, brackets, commas (a value the
# rules find ends at them anyway), so that text is searched a run between them at a time
_VALUE_RUN = lazy(r"[^\s\"'`(){}\[\]<>,]{%d,}" % BARE_MIN)
_ESCAPE_END = lazy(r"\\[nrt]|\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}")


@functools.cache
def _blake2b() -> Callable:
    """BLAKE2b, imported on first use, from its own module: ``hashlib`` also loads OpenSSL,
    which costs a capture hook a few milliseconds for nothing."""
    try:
        from _blake2 import blake2b
    except ImportError:  # (a Python built without it)
        from hashlib import blake2b
    return blake2b


def bare_worthy(value: str) -> bool:
    """Whether a secret found under a key is also redacted where it appears alone: at least
    BARE_MIN characters without whitespace, quotes, brackets or commas; letters alone from 16
    characters and digits alone from 12 only. ``password: postgres`` must not turn every "postgres" of the session into a
    marker, nor ``pin: 20251130`` every date; ``hunter22``, ``pw-5f3a…`` or a token are
    unlikely to be anything but the secret."""
    size = len(value)
    if not BARE_MIN <= size <= BARE_MAX or MARKER_PREFIX in value:
        return False
    if value.isalpha():
        return size >= 16
    if value.isdigit():
        return size >= 12
    return _VALUE_RUN.fullmatch(value) is not None


def _word_at(text: str, pos: int) -> bool:
    return 0 <= pos < len(text) and (text[pos].isalnum() or text[pos] == "_")


def _bare_at(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands alone: it cuts no run of letters, digits and underscores
    (a token right after a \\n, \\u003d or %3D escape stands alone too)."""
    return (
        not (_word_at(text, start - 1) and _word_at(text, start)) or escape_ends_at(text, start)
    ) and not (_word_at(text, end - 1) and _word_at(text, end))


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
        self.new: list[tuple[int, str, bytes]] = []  # learned here, not saved yet
        self._digests: dict[int, dict[bytes, str]] = {}  # length: digest: family
        self._values: dict[str, str] = {}  # value: family (this process only)
        self._covered: set[bytes] = set()  # digests of the values held
        self._search: Callable | None = None
        self._unmatched: dict[int, dict[bytes, str]] | None = None
        self._tokens: list[contextvars.Token] = []
        self.scrubbing = True  # (off while only learning)
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
        return _blake2b()(
            value.encode("utf-8", "surrogatepass"), key=self.salt[:64], digest_size=16
        ).digest()

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
        digest = self.digest(value)
        self._values[value] = family if family in PRIO else "generic-secret"
        self._covered.add(digest)
        self._search = self._unmatched = None
        known = self._digests.setdefault(len(value), {})
        if digest in known:
            return False
        known[digest] = self._values[value]
        self.new.append((len(value), known[digest], digest))
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
        for start, end, prio in spans:
            if prio != PRIO["private-key"] and end - start >= BARE_MIN:
                for piece in text[start:end].split():
                    self.learn(piece.strip(QUOTES), FAMILIES[prio])

    def spans(self, text: str) -> list[Span]:
        """Where known secrets stand bare in ``text``, merged."""
        found: list[Span] = []
        if self._values:
            if self._search is None:
                self._search = re.compile(
                    "|".join(map(re.escape, sorted(self._values, key=len, reverse=True)))
                ).search
            hit, search = self._search(text), self._search
            while hit:
                start, end = hit.span()
                if _bare_at(text, start, end):
                    found.append((start, end, PRIO[self._values[hit.group()]]))
                    hit = search(text, end)
                else:
                    hit = search(text, start + 1)
        if self._unmatched is None:
            self._unmatched = {
                n: left
                for n, ds in self._digests.items()
                if (left := {d: f for d, f in ds.items() if d not in self._covered})
            }
        if self._unmatched and len(text) >= BARE_MIN:
            found += self._hashed(text, self._unmatched)
        return merged_spans(found) if len(found) > 1 else found

    def _hashed(self, text: str, unmatched: dict[int, dict[bytes, str]]) -> list[Span]:
        """The candidate tokens of ``text`` whose digest is known: within each run a value
        could lie in (``_VALUE_RUN``), every span of a known length that cuts no word and
        could have been learned (``bare_worthy``)."""
        found: list[Span] = []
        digest = self.digest
        shortest = min(unmatched)
        for run_match in _VALUE_RUN.finditer(text):
            run_start, run = run_match.start(), run_match.group()
            run_len = len(run)
            if run_len < shortest:
                continue
            ends = {0, run_len}
            for non_word in _NOT_WORD.finditer(run):
                ends.add(non_word.start())
                ends.add(non_word.end())
            starts = ends
            if "\\" in run or "%" in run:
                starts = ends | {e.end() for e in _ESCAPE_END.finditer(run)}
            for length, known in unmatched.items():
                if length > run_len:
                    continue
                for end in ends.intersection(map(length.__add__, starts)):
                    if (
                        bare_worthy(piece := run[end - length : end])
                        and (value_digest := digest(piece)) in known
                    ):
                        found.append(
                            (
                                run_start + end - length,
                                run_start + end,
                                PRIO.get(known[value_digest], PRIO["generic-secret"]),
                            )
                        )
        return found

    def scrub(self, text: str) -> str:
        """``text`` with every bare occurrence of a known secret replaced by its marker."""
        spans = self.spans(text)
        return apply(text, spans)[0] if spans else text
