"""JSON for the hooks, through CPython's ``_json`` accelerator without importing ``json``.

``import json`` imports ``re`` (its decoder's and encoder's patterns), which with ``enum`` and
``functools`` is about a fifth of a hook's start-up. The parsing and writing themselves are the
C functions ``json`` calls, set up the way ``json.loads`` and ``json.dumps`` (no indent) set
them up, so the results are the same (``tests/test_fastjson.py`` checks that). On an
interpreter without ``_json``, this is ``json``. Standard library only: the hooks import this.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - an interpreter without the accelerator
    _json = None  # type: ignore[assignment]

_WHITESPACE = " \t\n\r"


class _Context:
    """What ``_json.make_scanner`` reads from a ``json.JSONDecoder`` (its defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__
    memo: dict[str, object] = {}


# (the scanner reads the context's attributes, as it reads a JSONDecoder's)
_scan = _json.make_scanner(_Context()) if _json is not None else None  # type: ignore[arg-type]


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``: a ``json.JSONDecodeError`` when ``text`` is not one JSON value."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")  # (json.loads also detects UTF-16/32: hooks get UTF-8)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except (StopIteration, SystemError):
        # not JSON: json says where and why (the C parser names its error through
        # json.decoder, and without it imported fails with a SystemError)
        return _json_loads(text)
    finally:
        _Context.memo.clear()  # (json.scanner clears its memo after each document too)
    if end != len(text.rstrip(_WHITESPACE)):
        return _json_loads(text)  # (extra data)
    return value


def _json_loads(text: str) -> Any:
    import json

    return json.loads(text)


def _unserializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(value: object, *, ensure_ascii: bool = True, sort_keys: bool = False) -> str:
    """``json.dumps(value, ensure_ascii=..., sort_keys=...)`` (no indent, default separators)."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys)
    if isinstance(value, str):  # (the C encoder writes containers and scalars other than str)
        return (_json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring)(value)
    encode = _json.make_encoder(
        {},  # markers: a value that holds itself is an error, as in json
        _unserializable,
        _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring,
        None,
        ": ",
        ", ",
        sort_keys,
        False,  # skipkeys
        True,  # allow_nan
    )
    return "".join(encode(value, 0))
