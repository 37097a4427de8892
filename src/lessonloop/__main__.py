"""Entry point for ``lessonloop`` and ``python -m lessonloop``."""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook":  # the hot path: no CLI stack
        # hooks run on the standard library only: the redactor keeps to its standard prefilter
        sys.modules["ahocorasick_rs"] = None  # type: ignore[assignment]
        import os

        from .memory.hooks import main as hook_main

        code = hook_main(sys.argv[2:], defer=True)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # (a caller that stopped reading: nothing to say)
                pass
        os._exit(code)  # no interpreter teardown (~3 ms): what the hook wrote is written
    if sys.argv[1:] in ([], ["--help"]):  # the command list, without importing Typer
        from . import help_cache

        text = help_cache.read()
        if text is not None:
            sys.stdout.write(text)
            sys.exit(0)
    if sys.argv[1:] == ["mcp"]:  # the server's start-up is dominated by the SDK: skip Typer
        from .errors import LessonloopError
        from .mcp.server import serve

        try:
            serve()
        except LessonloopError as exc:
            sys.stderr.write(f"error: {exc.message}\n")
            sys.exit(exc.exit_code)
        sys.exit(0)
    # a run's request on disk before anything heavy: resume works however early a kill comes
    from . import started

    sys.argv[1:], run_id = started.keep(sys.argv[1:])
    from .cli import main as cli_main

    code = cli_main()
    if run_id is not None and code == 2:  # refused for its arguments: nothing to resume
        started.forget_refused(run_id)
    sys.exit(code)


if __name__ == "__main__":
    main()
