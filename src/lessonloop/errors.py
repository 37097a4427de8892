"""Errors a user can act on: each carries its exit code and a one-line message."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from collections.abc import Callable

EXIT_FAILURE = 1
EXIT_USAGE = 2


FIELD = "{field}"  # where an error's message names its field


class LessonloopError(Exception):
    """An error reported to the user as one line, never as a traceback.

    The use cases word their errors for every adapter; two parts each adapter names its own
    way, through ``named``:

    - ``field``: the argument the message is about, by its name in the use case (``matches``,
      ``match_timeout``), named where ``{field}`` stands (at the start when it does not): the
      CLI as ``--match-timeout``, the MCP server as the tool argument ``match_timeout``.
    - ``listing``: the use case that lists what does exist (``list_runs``), for a message that
      should point there: the CLI as ``lessonloop list``, the MCP server as its tool.

    ``str()`` names both plainly: "match_timeout must be ...", "unknown run id 'x' (see
    list_runs)"."""

    exit_code = EXIT_FAILURE
    label = "error"  # how the one line starts in text mode

    def __init__(
        self,
        message: str,
        exit_code: int | None = None,
        *,
        field: str | None = None,
        listing: str | None = None,
    ):
        if field is not None and FIELD not in message:
            message = f"{FIELD} {message}"
        self.field = field
        self.listing = listing
        self._template = message
        super().__init__(self.named(str))
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self)

    def named(
        self, field_name: Callable[[str], str], listing_name: Callable[[str], str] = str
    ) -> str:
        """The message with the field called ``field_name(field)`` and the listing it points to
        called ``listing_name(listing)``."""
        text = self._template
        if self.field is not None:
            text = text.replace(FIELD, field_name(self.field))
        if self.listing is not None:
            text = f"{text} (see {listing_name(self.listing)})"
        return text


class Stopped(LessonloopError):
    """A stop the user asked for (Ctrl-C, SIGTERM): exit 1, but told as ``stopped: ...``, not
    as an error, since nothing went wrong."""

    label = "stopped"


class UsageError(LessonloopError):
    """The user's arguments are wrong (exit code 2); ``field`` names the argument at fault."""

    exit_code = EXIT_USAGE


class NotFoundError(LessonloopError):
    """A run, generation or file the user named does not exist (exit code 1); ``listing``
    points to what does."""


class StoreError(LessonloopError):
    """The database, or a file under the home, cannot be opened, read or written (exit code
    1): a full disk among them (see ``unwritable``)."""


NO_SPACE = (28, 122)  # ENOSPC, EDQUOT (a quota counts as a full disk to the user)
SPACE_HINT = (
    "free some space (or point LESSONLOOP_HOME at a disk with room) and run the "
    "command again; what was stored before is intact"
)


def no_space(path: object) -> StoreError:
    """The one line for a full disk, wherever it struck: the path and what to do."""
    return StoreError(f"no space left on the device holding {path}: {SPACE_HINT}")


def unwritable(path: object, exc: OSError) -> StoreError:
    """An OSError from writing ``path`` as one line the user can act on; a full disk (or
    quota) gets ``no_space``'s words. The one way every writer reports a failed write."""
    if exc.errno in NO_SPACE:
        return no_space(path)
    return StoreError(f"cannot write {path}: {exc.strerror or exc}")


class ProviderError(LessonloopError):
    """A model endpoint refused, failed or answered nonsense after any retries (exit code 1).

    ``completion``: what the endpoint had answered before the failure (an answer whose repair
    then failed), so callers can count every answered call; None when nothing was answered."""

    def __init__(self, message: str, status: int | None = None, completion=None):
        super().__init__(message)
        self.status = status  # the HTTP status when the endpoint answered with an error
        self.completion = completion


class EndpointUnavailable(ProviderError):
    """A loopback endpoint refused connections for longer than ``LESSONLOOP_CONNECT_WAIT``: its
    server is down. What was done is kept; the work can be resumed once it is up."""


class OffSchemaError(ProviderError):
    """The endpoint answered, but not with JSON matching the requested schema (after the one
    repair round). ``completion`` holds what it answered and used, so the calls are counted."""

    def __init__(self, message: str, completion=None):
        super().__init__(message, completion=completion)


ERROR_LINE_MAX = 500  # characters: an error echoing a huge argument stays readable
_ERROR_TAIL = 120  # kept from the end, where the hint is ("... (details in PATH)")


def one_line(message: object) -> str:
    """``message`` as the user sees it: redacted, on one line, at most ERROR_LINE_MAX long
    (cut in the middle, so the start and the hint at the end both stay)."""
    from .safety import cap, redact

    line = " ".join(redact(str(message)).split()) or "unknown error"
    if len(line) <= ERROR_LINE_MAX:
        return line
    return cap(line[:-_ERROR_TAIL], ERROR_LINE_MAX - _ERROR_TAIL) + line[-_ERROR_TAIL:]


def log_internal_error() -> str:
    """Append the current traceback, redacted, to ``logs/errors.log`` under the home; return
    " (details in PATH)" for the user's one line, or "" when the log cannot be written."""
    import traceback

    from . import paths
    from .safety.redact import redact

    try:
        log_dir = paths.home() / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        with open(log_dir / "errors.log", "a", encoding="utf-8") as handle:
            handle.write(redact(traceback.format_exc()) + "\n")
        return f" (details in {log_dir / 'errors.log'})"
    except OSError:
        return ""
