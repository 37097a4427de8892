"""The one compact JSON form lessonloop stores, compares and hashes.

Same text as ``json.dumps(value, sort_keys=True)``. ``json`` builds a new C encoder on every
call; this one is built once (the offline agent compares strategies by this text tens of
thousands of times a run: about a third of each call, issue 18). Built without a circular
reference check, so a value that holds itself fails with RecursionError instead of
ValueError: canonical values are data read from JSON or built as such, never circular.
"""

from __future__ import annotations

import json
from collections.abc import Callable


def _unserializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _encoder() -> Callable[[object], str]:
    try:
        from _json import encode_basestring_ascii, make_encoder
    except ImportError:  # pragma: no cover - an interpreter without json's accelerator
        return json.JSONEncoder(sort_keys=True).encode
    # json.JSONEncoder(sort_keys=True)'s settings, but no markers (no circular check): no
    # indent, its separators, keys sorted, none skipped, NaN allowed
    encode = make_encoder(
        None, _unserializable, encode_basestring_ascii, None, ": ", ", ", True, False, True
    )

    def dumps(value: object) -> str:
        """``json.dumps(value, sort_keys=True)``."""
        if isinstance(value, str):
            return encode_basestring_ascii(value)
        return "".join(encode(value, 0))

    return dumps


dumps = _encoder()
