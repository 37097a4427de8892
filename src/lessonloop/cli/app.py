"""The ``lessonloop`` command: a Typer app whose commands live one group per module."""

from __future__ import annotations

import typer

from . import inspect as inspect_commands
from . import memory as memory_commands
from . import providers as provider_commands
from . import report as report_commands
from . import run as run_commands
from . import scenarios as scenario_commands
from . import tasks as task_commands
from .help_format import WholeSentences

app = typer.Typer(
    name="lessonloop",
    cls=WholeSentences,
    help="A local-first harness that makes AI agents better with every run and every session.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

for module in (
    run_commands,
    inspect_commands,
    scenario_commands,
    task_commands,
    memory_commands,
    provider_commands,
    report_commands,
):
    module.register(app)
