"""A session's known secrets on disk, and the captures rewritten without them.

A value the redactor found under a secret's name (``export DB_PASSWORD=pw-5f3a…``, a
``--token`` flag, an ``Authorization`` header, ``{"api_key": …}``) or by its shape is a secret
wherever else it appears in the session: alone in a later log line, in an error line that
becomes a pattern's key, in a sentence that becomes a lesson. The redactor does the finding and
the replacing (``safety.redact.KnownSecrets``); this module keeps what a session found between
its hook processes, in ``sessions/<id>/secret-digests``: the session's random salt and the
salted digests of the values, never a value.

``watching`` is what a capture hook or memorize wraps its work in: it loads the session's
digests, learns from what the event saw (the whole payload, not only the lines it keeps),
and when it learned something new saves it and rewrites the session's earlier captures (a value
seen bare before its key). Memorize first learns from the whole transcript (the capture hooks
see prompts and failures only, never the output of a command that succeeded) and always
rewrites the captures. Standard library only: the capture hooks import it.
"""

from __future__ import annotations

import fcntl
import json
import os

from . import capture

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a hook's start-up)
if TYPE_CHECKING:
    from ..safety.redact import KnownSecrets

FILE = "secret-digests"
SALT_BYTES = 16
_HEAD = 64_000  # characters of a huge string learned from: its head and tail
_TAIL = 64_000
_LINE_BYTES = 2_000_000  # transcript lines longer than this are skipped (as transcript.read does)


def load(folder: str | os.PathLike) -> KnownSecrets:
    """The session's known secrets (none, with a fresh salt, when it saved none yet)."""
    from ..safety.redact import KnownSecrets  # (here: the hooks read FILE without loading it)

    salt, saved = _read(os.path.join(folder, FILE))
    return KnownSecrets(salt or os.urandom(SALT_BYTES), saved)


def _read(path: str) -> tuple[bytes | None, list[tuple[int, str, bytes]]]:
    try:
        with open(path, "rb") as handle:
            return _parse(handle.read())
    except OSError:
        return None, []


def _parse(data: bytes) -> tuple[bytes | None, list[tuple[int, str, bytes]]]:
    """``salt <hex>`` then ``<length> <family> <hex digest>`` lines (a torn line is skipped)."""
    salt, saved = None, []
    for line in data.decode("ascii", "replace").splitlines():
        parts = line.split()
        try:
            if len(parts) == 2 and parts[0] == "salt" and salt is None:
                salt = bytes.fromhex(parts[1])
            elif len(parts) == 3 and salt is not None:
                saved.append((int(parts[0]), parts[1], bytes.fromhex(parts[2])))
        except ValueError:
            continue
    return salt, saved


def save(folder: str | os.PathLike, known: KnownSecrets) -> None:
    """Add what ``known`` learned to the session's file (under its lock: hooks of one session
    run at once; the first to save sets the salt, and the others' digests follow it)."""
    if not known.new:
        return
    os.makedirs(folder, exist_ok=True)
    fd = os.open(os.path.join(folder, FILE), os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = b""
        while chunk := os.read(fd, 1 << 16):
            data += chunk
        salt, _ = _parse(data)
        lines = [] if salt else [f"salt {known.salt.hex()}"]
        lines += [f"{n} {family} {digest.hex()}" for n, family, digest in known.saved(salt)]
        os.write(fd, ("\n".join(lines) + "\n").encode("ascii"))
        known.new.clear()
    finally:
        os.close(fd)


def scrub_captures(folder: str | os.PathLike, known: KnownSecrets) -> None:
    """Rewrite the session's captures (``*.jsonl``) with every known secret redacted."""
    if known:
        capture.rewrite_all(folder, known.scrub)


def _window(value: object) -> object:
    """``value`` with every huge string cut to its head and tail (what is learned from it)."""
    if isinstance(value, str):
        return value if len(value) <= _HEAD + _TAIL else f"{value[:_HEAD]}\n{value[-_TAIL:]}"
    if isinstance(value, dict):
        return {k: _window(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_window(v) for v in value]
    return value


def learn(known: KnownSecrets, *seen: object) -> None:
    """Learn the secrets in what an event saw (strings and structures, as the redactor reads
    them: a value under a secret's name in a structure too)."""
    for value in seen:
        if value is not None:
            known.learn_from(_window(value))


def learn_transcript(known: KnownSecrets, path: str | None) -> None:
    """Learn the secrets in every event of a Claude Code transcript, every string whole (a
    line too long to read is skipped, as ``transcript.read`` skips it: nothing of it is kept)."""
    if not path:
        return
    from .transcript_reader import read_lines

    try:
        handle = open(path, "rb")
    except OSError:
        return
    with handle:
        for raw in read_lines(handle, _LINE_BYTES):
            if not raw:
                continue
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            known.learn_from(event)


class watching:  # noqa: N801 - used like a function: ``with watching(folder, ...):``
    """Within the block, the redactor redacts the session's known secrets wherever they stand
    bare and learns new ones (see the module docstring). ``seen``: what the event saw, learned
    first; ``transcript``: a transcript to learn from first (memorize); ``rewrite``: rewrite
    the captures even when nothing new was learned (memorize: a hook may have captured a value
    before any hook saw its key)."""

    def __init__(
        self,
        folder: str | os.PathLike,
        seen: tuple = (),
        transcript: str | None = None,
        rewrite: bool = False,
    ):
        self.folder, self.seen, self.transcript, self.rewrite = folder, seen, transcript, rewrite

    def __enter__(self) -> KnownSecrets:
        self.known = load(self.folder)
        learn(self.known, *self.seen)
        learn_transcript(self.known, self.transcript)
        self._settle(self.rewrite)
        self.known.__enter__()
        return self.known

    def __exit__(self, *exc_info) -> None:
        self.known.__exit__(*exc_info)
        self._settle(False)

    def _settle(self, rewrite: bool) -> None:
        if self.known.new or rewrite:
            save(self.folder, self.known)
            scrub_captures(self.folder, self.known)
