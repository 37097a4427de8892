"""Safety helpers used by admission and by every writer: redact, sanitize, cap.

Order matters (DESIGN §6): ``redact`` first (before any truncation), then ``sanitize``, then
``cap``. ``clean`` does all three.
"""

from __future__ import annotations

from .caps import CONTENT_MAX, HOW_MAX, SUMMARY_MAX, TRUNCATION_MARKER, WHY_MAX, cap
from .redact import FAMILIES, find_secrets, redact, redact_obj
from .sanitize import sanitize

__all__ = [
    "CONTENT_MAX", "FAMILIES", "HOW_MAX", "SUMMARY_MAX", "TRUNCATION_MARKER", "WHY_MAX",
    "cap", "clean", "find_secrets", "redact", "redact_obj", "sanitize",
]


def clean(text: str, limit: int | None = None) -> str:
    """Redact, then sanitize, then (when ``limit`` is given) cap: the admission order.

    When sanitizing changed the text it is redacted once more: a key split by an invisible
    character (``ghp_<U+200B>…``) only becomes recognisable once that character is gone.
    """
    redacted = redact(text)
    text = sanitize(redacted)
    if text != redacted:
        text = redact(text)
    return text if limit is None else cap(text, limit)
