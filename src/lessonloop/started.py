"""What a run-starting command (``run``, ``improve``) was asked, on disk first thing, so that
``resume`` works for any run such a command had started, however early it was killed.

``run`` writes its parsed request (``loop/request.py``) once its arguments are read, but
reading them means importing the CLI stack first, which takes tens of milliseconds (far more
under load): a kill in that window left nothing to resume, and a run started without
``--run-id`` had no id its user could know. So ``__main__`` calls ``keep`` before importing
anything else: it gives the command a run id when it has none (appending ``--run-id``), and
writes the command line and working folder to ``runs/<id>/request.json``. ``resume`` of an id
with no row replays that command line in that folder, as if it had been typed again; the
command's own parsed request, and then the run's row, replace it as start-up goes on. A command
refused for its arguments (exit 2) takes the request away again (``forget_refused``).

Standard library only, and only what ``__main__`` needs at once: this runs before the CLI.
"""

from __future__ import annotations

import json
import os
import re
import time

COMMANDS = ("run", "improve")
NAME = "request.json"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")  # loop.request.RUN_ID


def _given_id(args: list[str]) -> tuple[str | None, bool]:
    """The ``--run-id`` value among ``args`` and whether the option is there at all."""
    for i, arg in enumerate(args):
        if arg == "--run-id":
            return (args[i + 1] if i + 1 < len(args) else None), True
        if arg.startswith("--run-id="):
            return arg.split("=", 1)[1], True
        if arg == "--":
            break
    return None, False


def _home() -> str:
    return os.path.abspath(os.path.expanduser(os.environ.get("LESSONLOOP_HOME") or ".lessonloop"))


def request_path(run_id: str) -> str:
    return os.path.join(_home(), "runs", run_id, NAME)


def keep(args: list[str]) -> tuple[list[str], str | None]:
    """``args`` (the command line after ``lessonloop``) with a run id, and that id; the
    request written when it can be (any failure is left for the command to report)."""
    if not args or args[0] not in COMMANDS or "--help" in args[1:]:
        return args, None
    run_id, given = _given_id(args[1:])
    if not given:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        run_id = f"run-{stamp}-{os.urandom(3).hex()}"  # loop.request.new_run_id's form
        args = [*args, "--run-id", run_id]
    if not run_id or not _ID.match(run_id):
        return args, None  # the command refuses it in its own words
    try:
        home = _home()
        if not os.path.isdir(home):
            os.makedirs(home)
            with open(os.path.join(home, ".gitignore"), "w", encoding="utf-8") as handle:
                handle.write("*\n")
        path = request_path(run_id)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump({"argv": args, "cwd": os.getcwd()}, handle)
        os.replace(temporary, path)
    except OSError:
        return args, None
    return args, run_id


def forget_refused(run_id: str) -> None:
    """The command refused its arguments: remove the command line it was started with (a
    request the command wrote itself, or a run's row, are its own business)."""
    path = request_path(run_id)
    try:
        with open(path, encoding="utf-8") as handle:
            if "argv" not in json.load(handle):
                return
        os.unlink(path)
        os.rmdir(os.path.dirname(path))
    except (OSError, ValueError, TypeError):
        pass
