"""Consent to automatic memories: ``automem-consent.json`` in the project's home.

``{"consented": true|false, "at": ISO}``, or ``"ask"`` to be asked again. Missing or ``ask``:
nothing is synthesized and the user is told once per session how to answer; ``false``:
nothing at all. Standard library only.
"""

from __future__ import annotations

import os

from .. import fastjson

FILE = "automem-consent.json"
ANSWERS = {"yes": True, "no": False, "ask": "ask"}
HOW_TO_ANSWER = (
    "lessonloop can turn this session's errors, fixes and stated preferences into "
    "local memories (redacted, nothing leaves the machine unless you configure a "
    "model). Allow it with `lessonloop memory consent yes` (or `no`; `ask` to be "
    "asked again)."
)


def state(root: str | os.PathLike) -> str:
    """``yes``, ``no``, ``ask`` or ``missing`` (an unreadable file counts as missing)."""
    try:
        with open(os.path.join(root, FILE), encoding="utf-8") as handle:
            value = fastjson.loads(handle.read()).get("consented")
    except (OSError, ValueError, AttributeError):
        return "missing"
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return "ask" if value == "ask" else "missing"


def record(root, answer: str):
    """Write the user's answer (``yes``, ``no`` or ``ask``) atomically; returns the path."""
    from datetime import UTC, datetime
    from pathlib import Path

    if answer not in ANSWERS:
        raise ValueError(f"consent is yes, no or ask, not {answer!r}")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    path = root / FILE
    temporary = path.with_name(f".{FILE}.{os.getpid()}.tmp")
    try:
        temporary.write_text(
            fastjson.dumps({"consented": ANSWERS[answer], "at": at}) + "\n", encoding="utf-8"
        )
        os.replace(temporary, path)
    except OSError as exc:  # a full disk: the earlier answer stays, and the user is told
        from ..errors import unwritable

        try:  # (not contextlib.suppress: the hooks import this module, and contextlib costs ~1 ms)
            temporary.unlink()
        except OSError:
            pass
        raise unwritable(path, exc) from None
    return path
