"""The scan engine: one pass runs the detectors the prefilter lets through and merges their
spans; ``redact`` repeats the pass over the lines that changed until nothing does, so
``redact(redact(x)) == redact(x)``; ``find_secrets`` reports the first pass; ``redact_obj``
redacts structures, where a key is the context that makes its value a secret.
"""

from __future__ import annotations

import contextvars

from ...lazyre import lazy
from .entropy import ENTROPY_ID, entropy_safe_name, looks_random
from .families import FAMILIES, MARKER_PREFIX, MARKER_RE, Span, marker
from .lexicon import classify, placeholder
from .named import short_word
from .prefilter import NOTHING, needles_in_markers, present_low, skip_for, steps_for
from .text import QUOTES, Scan

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from typing import Any

    from .session import KnownSecrets


_MAX_PASSES = 6


# --------------------------------------------------------------------------------------------
# The pass, merging, and the public API


def _collect(text: str, skip: frozenset = frozenset(), low: str | None = None,
             known: dict | None = None) -> tuple[list[Span], frozenset]:
    """One pass: merged spans, and what the next pass over the redacted text may skip (when
    there is one).
    (``low``: ``text.lower()`` when already known and ``text`` is ASCII; ``known``: the key
    needles' runs in it, see Scan.key_runs.)"""
    sc = Scan(text, skip, low, known)
    found: list[Span] = []
    for step in steps_for(skip):
        step(sc, found)
    found = [f for f in found if f[1] > f[0] and not text.startswith(MARKER_PREFIX, f[0])]
    if not found:
        return found, NOTHING                         # (no next pass)
    return merged_spans(found), sc.next_skip() - needles_in_markers()


def merged_spans(found: list[Span]) -> list[Span]:
    """Overlapping spans as one, sorted; a merged span keeps the most specific family."""
    found.sort()
    merged = [found[0]]
    for s, e, p in found[1:]:
        ms, me, mp = merged[-1]
        if s < me:
            merged[-1] = (ms, max(me, e), min(mp, p))
        else:
            merged.append((s, e, p))
    return merged


def apply(text: str, spans: list[Span]) -> tuple[str, list[tuple[int, int]]]:
    """The text with the spans replaced by markers, and where those markers now are."""
    parts, pos, out, marks = [], 0, 0, []
    for s, e, p in spans:
        parts.append(text[pos:s])
        m = marker(FAMILIES[p])
        out += s - pos
        marks.append((out, out + len(m)))
        out += len(m)
        parts.append(m)
        pos = e
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
    n = len(text)
    windows: list[list[int]] = []
    for s, e in marks:
        if windows and s < windows[-1][1]:
            continue
        ws = text.rfind("\n", 0, s) + 1
        we = text.find("\n", e)
        we = n if we == -1 else we + 1
        while we < n and text[we] in " \t\n":            # the indented lines after it
            nxt = text.find("\n", we)
            we = n if nxt == -1 else nxt + 1
        if windows and ws <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], we)
        else:
            windows.append([ws, we])
    if sum(we - ws for ws, we in windows) * 2 > n:
        return _collect(text, skip)[0]
    spans: list[Span] = []
    for ws, we in windows:
        spans += [(s + ws, e + ws, p) for s, e, p in _collect(text[ws:we], skip)[0]]
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
        low = known = None                  # (str.lower() may change non-ASCII lengths)
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
_ENTITY_CHARS = {"&quot;": '"', "&#34;": '"', "&#x22;": '"', "&apos;": "'", "&#39;": "'",
                 "&#x27;": "'", "&lt;": "<", "&gt;": ">", "&amp;": "&", "\\u0022": '"',
                 "\\u0027": "'", "\\u003c": "<", "\\u003e": ">", "\\u0026": "&", "\\u003d": "="}
_ENTITY = lazy(r"&(?:quot|apos|lt|gt|amp|#34|#39|#x22|#x27);|\\u00(?:22|27|3[cCdDeE]|26)")


def _encoded_secrets(text: str) -> list[Span]:
    """The spans, in ``text``, of the secrets found once its entities and escapes are read as
    the characters they stand for (a span covers the encoded form of what it found)."""
    parts, where, pos = [], [], 0
    for m in _ENTITY.finditer(text):
        parts.append(text[pos:m.start()])
        where.extend(range(pos, m.start()))
        parts.append(_ENTITY_CHARS[m.group().lower()])
        where.append(m.start())
        pos = m.end()
    parts.append(text[pos:])
    where.extend(range(pos, len(text) + 1))            # (and the end, for a span's end)
    return [(where[s], where[e], p) for s, e, p in _collect("".join(parts))[0]]


def _secret_key(key: Any) -> str | None:
    if not isinstance(key, str) or len(key) > 200:
        return None
    k = MARKER_RE.sub(" ", key).strip(" \t\"'.-")
    if k.lower().endswith("authorization"):
        return "authorization-header"
    return classify(k)


_LOOSE_NAME_FAMILIES = frozenset({"generic-secret", "cloudflare-token", "twilio-key", "sendgrid-key",
                                  "mailgun-key"})


def _secret_value(family: str, key: str, v: Any) -> bool:
    if isinstance(v, str):
        t = v.strip()
        if not t or placeholder(t) or MARKER_RE.fullmatch(t):
            return False
        if family in _LOOSE_NAME_FAMILIES and short_word(t, key if isinstance(key, str) else ""):
            return False                               # {"token": "Hello"}: a tokenizer's
        return True
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return family == "password" and key.strip().lower() != "pass"
    return False


_ENTROPY_VALUE = lazy(r"[A-Za-z0-9+/_.~-]{24,256}+={0,3}+")


def _random_value_under(key: Any, v: Any) -> bool:
    """The high-entropy fallback in a structure: a random token stored under a name that does
    not say it is an id, a digest, a signature or a public key."""
    return (isinstance(v, str) and _ENTROPY_VALUE.fullmatch(v) is not None
            and ENTROPY_ID.match(v) is None and looks_random(v)
            and not (isinstance(key, str) and entropy_safe_name(key)))


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
        named = next((value[f] for f in ("name", "Name", "key", "Key")
                      if isinstance(value.get(f), str)), None)
        named_family = _secret_key(named) if named is not None else None
        for k, v in value.items():
            family = _secret_key(k) or (named_family if k in ("value", "Value") else None)
            if family and _secret_value(family, k, v):
                whole = redact(v).strip() if isinstance(v, str) else ""
                _learn(v, family)
                out[redact_obj(k)] = whole if MARKER_RE.fullmatch(whole) else marker(family)
            elif _random_value_under(k, v):
                _learn(v, "generic-secret")
                out[redact_obj(k)] = marker("generic-secret")
            else:
                out[redact_obj(k)] = redact_obj(v)
        return out
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    if isinstance(value, tuple):
        items = [redact_obj(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, (set, frozenset)):
        return type(value)(redact_obj(v) for v in value)
    return value
SESSION: contextvars.ContextVar = contextvars.ContextVar("lessonloop_known_secrets",
                                                          default=None)


def _learn(value: Any, family: str) -> None:
    """Inside ``with known:``, learn a value a structure keeps under a secret's name."""
    session = SESSION.get()
    if session is not None and isinstance(value, str):
        for piece in value.split():
            session.learn(piece.strip(QUOTES), family)
