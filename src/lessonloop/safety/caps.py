"""Codepoint-safe truncation with a visible marker.

``cap`` never splits a surrogate pair, a base character from its combining marks (or a ZWJ /
variation-selector / emoji-modifier sequence, or a regional-indicator flag pair), and never
leaves half of a ``[REDACTED:...]`` marker: the cut moves back to before such a sequence.
Redaction must run *before* ``cap`` (see ``safety/__init__.py``), so a secret is already a marker when it is cut.
"""

from __future__ import annotations

from .redact import MARKER_RE

__all__ = ["CONTENT_MAX", "HOW_MAX", "SUMMARY_MAX", "TRUNCATION_MARKER", "WHY_MAX", "cap"]

SUMMARY_MAX = 120
CONTENT_MAX = 4096
WHY_MAX = 1024
HOW_MAX = 1024
TRUNCATION_MARKER = "…[truncated]"

_MARKER_MAX = 64  # longer than any "[REDACTED:<family>]"
_ZWJ = "\u200d"


def _extends_previous(char: str) -> bool:
    """True for a character that belongs to the character cluster before it."""
    import unicodedata  # (here: the hooks import this package and never cap)

    code = ord(char)
    return (
        unicodedata.combining(char) != 0
        or unicodedata.category(char) in ("Mn", "Mc", "Me")
        or char == _ZWJ
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF  # variation selectors
        or 0x1F3FB <= code <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xDC00 <= code <= 0xDFFF  # low surrogate of a pair
    )


def _is_ri(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _safe_cut(text: str, cut: int) -> int:
    """The largest index <= cut at which ``text`` can be cut without breaking a sequence."""
    while cut > 0:
        before = cut
        # Half a [REDACTED:...] marker: cut before the marker.
        window_start = max(0, cut - _MARKER_MAX)
        for marker in MARKER_RE.finditer(text, window_start, min(len(text), cut + _MARKER_MAX)):
            if marker.start() < cut < marker.end():
                cut = marker.start()
                break
        # Combining marks, ZWJ sequences, surrogate pairs: cut before the base character.
        while 0 < cut < len(text) and (_extends_previous(text[cut]) or text[cut - 1] == _ZWJ):
            cut -= 1
        # A regional-indicator pair (a flag): keep pairs whole.
        if 0 < cut < len(text) and _is_ri(text[cut]) and _is_ri(text[cut - 1]):
            run = 0
            while cut - run > 0 and _is_ri(text[cut - run - 1]):
                run += 1
            if run % 2:
                cut -= 1
        if cut == before:
            return cut
    return 0


def cap(text: str, limit: int, marker: str = TRUNCATION_MARKER) -> str:
    """``text`` if it has at most ``limit`` codepoints, else a safe prefix plus ``marker``.

    The result never exceeds ``limit`` codepoints. When ``limit`` is too small to hold the
    marker at all, the result is a safe prefix of ``text`` without the marker.
    """
    if not isinstance(text, str):
        raise TypeError(f"cap() needs str, not {type(text).__name__}")
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return text
    if len(marker) > limit:
        return text[: _safe_cut(text, limit)]
    return text[: _safe_cut(text, limit - len(marker))] + marker
