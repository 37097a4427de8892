"""The ``lessonloop`` command: every command registered on Typer, in the order ``--help`` lists
them. The commands are top-level functions, one module per group; their parameters declare
their flags and help (see ``lazy_typer.py``), their docstrings are the help text."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from . import evolve as evolve_commands
from . import inspect as inspect_commands
from . import integrations as integration_commands
from . import knowledge as knowledge_commands
from . import memory as memory_commands
from . import memory_evidence as evidence_commands
from . import memory_review as review_commands
from . import mission as mission_commands
from . import playbook as playbook_commands
from . import promotion as promotion_commands
from . import providers as provider_commands
from . import report as report_commands
from . import run as run_commands
from . import scenarios as scenario_commands
from . import serve as serve_commands
from . import tasks as task_commands
from . import training as training_commands
from .help_format import WholeSentences

if TYPE_CHECKING:
    from collections.abc import Callable

app = typer.Typer(
    name="lessonloop",
    cls=WholeSentences,
    help="A local-first harness that makes AI agents better with every run and every session.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
memory_app = typer.Typer(
    help=memory_commands.GROUP_HELP,
    no_args_is_help=True,
    add_completion=False,
    cls=WholeSentences,
)

run_commands.register(app)  # run, resume
command: Callable[..., object]  # each group's commands differ in their parameters
for name, command in (
    ("status", inspect_commands.status_command),
    ("show", inspect_commands.show_command),
    ("list", inspect_commands.list_command),
    ("watch", inspect_commands.watch_command),
    ("export", inspect_commands.export_command),
    ("report", report_commands.report_command),
    ("compare", report_commands.compare_command),
    ("serve", serve_commands.serve_command),
    ("scenarios", scenario_commands.scenarios_command),
    ("evaluate", scenario_commands.evaluate_command),
):
    app.command(name)(command)
task_commands.register(app)  # improve, judge, solve
app.command("evolve")(evolve_commands.evolve)
app.command("mission")(mission_commands.mission)
app.add_typer(memory_app, name="memory")
for name, command in (
    ("consent", memory_commands.consent_command),
    ("search", memory_commands.search_command),
    ("list", memory_commands.list_command),
    ("audit", memory_commands.audit_command),
    ("why", memory_commands.why_command),
    ("forget", memory_commands.forget_command),
    ("add", memory_commands.add_command),
    ("recall", memory_commands.recall_command),
    ("prune", memory_commands.prune_command),
    ("feedback", evidence_commands.feedback_command),
    ("stats", evidence_commands.stats_command),
    ("edit", review_commands.edit_command),
    ("supersede", review_commands.supersede_command),
    ("pin", review_commands.pin_command),
    ("approve", review_commands.approve_command),
    ("reject", review_commands.reject_command),
):
    memory_app.command(name)(command)
knowledge_app = typer.Typer(
    help=knowledge_commands.KNOWLEDGE_HELP, no_args_is_help=True, add_completion=False,
    cls=WholeSentences,
)  # fmt: skip
knowledge_app.command("export")(knowledge_commands.export_command)
knowledge_app.command("import")(knowledge_commands.import_command)
app.add_typer(knowledge_app, name="knowledge")
skill_app = typer.Typer(
    help=knowledge_commands.SKILL_HELP, no_args_is_help=True, add_completion=False,
    cls=WholeSentences,
)  # fmt: skip
skill_app.command("export")(knowledge_commands.skill_export_command)
app.add_typer(skill_app, name="skill")
playbook_app = typer.Typer(
    help=playbook_commands.GROUP_HELP,
    no_args_is_help=True,
    add_completion=False,
    cls=WholeSentences,
)
app.add_typer(playbook_app, name="playbook")
for name, command in (
    ("list", playbook_commands.list_command),
    ("edit", playbook_commands.edit_command),
    ("forget", playbook_commands.forget_command),
    ("pin", playbook_commands.pin_command),
    ("approve", playbook_commands.approve_command),
    ("reject", playbook_commands.reject_command),
):
    playbook_app.command(name)(command)
promotions_app = typer.Typer(
    help=promotion_commands.GROUP_HELP,
    add_completion=False,
    cls=WholeSentences,
    invoke_without_command=True,
)
promotions_app.callback()(promotion_commands.list_command)
promotions_app.command("rollback")(promotion_commands.rollback_command)
promotions_app.command("approve")(promotion_commands.approve_command)
app.command("promote")(promotion_commands.promote_command)
app.add_typer(promotions_app, name="promotions")
app.command("train")(training_commands.train_command)
models_app = typer.Typer(
    help=training_commands.GROUP_HELP,
    no_args_is_help=True,
    add_completion=False,
    cls=WholeSentences,
)
for name, command in (
    ("list", training_commands.list_command),
    ("show", training_commands.show_command),
    ("activate", training_commands.activate_command),
    ("rollback", training_commands.rollback_command),
):
    models_app.command(name)(command)
app.add_typer(models_app, name="models")
app.command("hook", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
    integration_commands.hook_command
)
for name, command in (
    ("mcp", integration_commands.mcp_command),
    ("memorize", memory_commands.memorize_command),
    ("install", integration_commands.install_command),
    ("uninstall", integration_commands.uninstall_command),
    ("doctor", provider_commands.doctor_command),
    ("usage", provider_commands.usage_command),
):
    app.command(name)(command)
