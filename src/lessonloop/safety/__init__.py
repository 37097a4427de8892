"""Safety helpers used by admission and by every writer: redact, sanitize, cap.

Order matters (the admission gate, ``knowledge/admission.py``): ``redact`` before any truncation (``cap``), so no prefix of a secret
can survive; ``sanitize`` before ``redact``, so a key split by an invisible character is whole
again when the redactor looks at it. ``clean`` does all three.
"""

from __future__ import annotations

from .caps import CONTENT_MAX, HOW_MAX, SUMMARY_MAX, TRUNCATION_MARKER, WHY_MAX, cap
from .redact import FAMILIES, find_secrets, marker, redact, redact_obj
from .sanitize import sanitize

__all__ = [
    "CONTENT_MAX",
    "FAMILIES",
    "HOW_MAX",
    "SUMMARY_MAX",
    "TRUNCATION_MARKER",
    "WHY_MAX",
    "cap",
    "clean",
    "find_secrets",
    "redact",
    "redact_obj",
    "sanitize",
]


def clean(text: str, limit: int | None = None) -> str:
    """Sanitize, redact, then (when ``limit`` is given) cap: the admission order.

    An invisible character may hide a key two ways, so the redactor looks at both readings:
    with it removed (``sk-ant-…<U+200B>…`` is one key again) and as a space (``x<U+202E>ghp_…``
    would otherwise glue the key to the word before it).
    """
    joined = sanitize(text)
    cleaned = redact(joined)
    spaced = sanitize(text, as_spaces=True)
    if spaced != joined:
        for family, start, end in find_secrets(spaced):
            cleaned = cleaned.replace(spaced[start:end], marker(family))
    return cleaned if limit is None else cap(cleaned, limit)
