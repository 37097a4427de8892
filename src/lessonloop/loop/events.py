"""``runs/<id>/events.ndjson``: one JSON event per line (seq, ts, event, payload).

Appends are single ``write`` calls of whole lines. After a crash, a torn last line is cut
off and numbering continues from the last complete event, so ``watch`` always parses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import canonical
from ..errors import unwritable
from ..safety.redact import redact_obj
from ..timeutil import utc_now


class EventLog:
    def __init__(self, path: Path):
        self.path = path
        self.seq = self._recover()

    def _recover(self) -> int:
        if not self.path.exists():
            return 0
        data = self.path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            with open(self.path, "r+b") as handle:
                handle.truncate(len(complete))
        last = 0
        for line in complete.splitlines():
            try:
                last = max(last, int(json.loads(line)["seq"]))
            except (ValueError, KeyError, TypeError):
                continue
        return last

    def emit(self, event: str, **payload: object) -> dict:
        self.seq += 1
        record = {"seq": self.seq, "ts": utc_now(), "event": event, "payload": redact_obj(payload)}
        line = (canonical.dumps(record) + "\n").encode()
        try:
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(descriptor, line)  # a partial line is cut off when the log is next opened
            finally:
                os.close(descriptor)
        except OSError as exc:
            raise unwritable(self.path, exc) from None
        return record


def read_events(path: Path, offset: int = 0) -> tuple[list[dict], int]:
    """Complete events after byte ``offset``, and the offset to continue from."""
    if not path.exists():
        return [], offset
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    events = []
    for line in data[:end].splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events, offset + end
