"""Command-line interface. ``main`` turns every failure into one line and an exit code."""

from __future__ import annotations

import sys

from ..errors import (
    EXIT_FAILURE,
    EXIT_USAGE,
    NO_SPACE,
    LessonloopError,
    log_internal_error,
    no_space,
)


def _click_exceptions():
    try:
        from typer._click import exceptions  # Typer ≥ 0.23 vendors Click
    except ImportError:  # pragma: no cover - older Typer depends on Click
        from click import exceptions
    return exceptions


def main(argv: list[str] | None = None, fast: bool = True) -> int:
    """Run one command line. The inspection commands skip Typer (``fast.py``) unless ``fast``
    is False (the tests compare both paths)."""
    from . import fast as fast_path
    from .output import error_line, error_text

    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv or "--ndjson" in argv
    try:
        parsed = fast_path.parse(argv) if fast else None
        if parsed is not None:
            return fast_path.call(parsed)
        return _typer_main(argv, as_json)
    except LessonloopError as exc:
        error_line(error_text(exc), as_json, exc.label)
        return exc.exit_code
    except KeyboardInterrupt:  # Ctrl-C where no command turned it into its own words
        error_line("interrupted", as_json, "stopped")
        return EXIT_FAILURE
    except BrokenPipeError:  # the reader of our output went away (e.g. `| head`)
        error_line("output closed before it was complete", as_json)
        return EXIT_FAILURE
    except OSError as exc:
        if exc.errno not in NO_SPACE:
            return _internal_error(exc, as_json)
        # a full disk where no writer named its path: the file, else the home
        from .. import paths

        error_line(no_space(exc.filename or paths.home()).message, as_json)
        return EXIT_FAILURE
    except Exception as exc:  # a bug: still one line for the user, the traceback to the log
        return _internal_error(exc, as_json)


def _typer_main(argv: list[str], as_json: bool) -> int:
    """Every other command line, read by Typer; its own exits and usage errors become codes
    and one line here, everything else is ``main``'s to report."""
    import typer
    from typer.main import get_command

    from .output import error_line

    click_exceptions = _click_exceptions()
    try:
        from .app import app

        if argv in ([], ["--help"]):  # render it ourselves, to keep it for the next time
            from .. import help_cache

            command = get_command(app)
            # a bare context: parsing would run Typer's parameter machinery for nothing
            text = command.get_help(command.context_class(command, info_name="lessonloop")) + "\n"
            sys.stdout.write(text)
            help_cache.store(text)
            return 0
        result = get_command(app).main(args=argv, prog_name="lessonloop", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        error_line("aborted", as_json)
        return EXIT_FAILURE
    except getattr(click_exceptions, "NoArgsIsHelpError", ()) as exc:
        sys.stdout.write(exc.ctx.get_help() + "\n")
        return 0
    except click_exceptions.ClickException as exc:
        error_line(exc.format_message(), as_json)
        return EXIT_USAGE if isinstance(exc, click_exceptions.UsageError) else EXIT_FAILURE


def _internal_error(exc: Exception, as_json: bool) -> int:
    from .output import error_line

    where = log_internal_error()
    error_line(f"internal error: {exc.__class__.__name__}: {exc}{where}", as_json)
    return EXIT_FAILURE
