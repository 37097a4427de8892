"""``train SCENARIO [--backend B]`` and ``models list|show|activate|rollback``: training a
model from the store and the model registry; each prints what ``app/training.py`` answers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

from .output import print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer

GROUP_HELP = (
    "Trained checkpoints in the model registry: list, show, activate or roll back the "
    "competitor a scenario is served."
)
SCENARIO_HELP = "A scenario name (or scenario:NAME)."


def train_command(
    scenario: Annotated[
        str, typer.Argument(metavar="SCENARIO", help=SCENARIO_HELP + " task:NAME with lora.")
    ],
    backend: Annotated[
        str,
        typer.Option(
            "--backend",
            help="surrogate: a model of score over strategy (CPU). lora: a LoRA adapter of a "
            "language model on the kept generations' prompts and answers (the lora extra).",
        ),
    ] = "surrogate",
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="lora: the causal language model to adapt, a local directory or a Hub id "
            "(default Qwen/Qwen2.5-0.5B-Instruct).",
        ),
    ] = None,
    steps: Annotated[
        int | None, typer.Option("--steps", help="lora: optimizer steps (default 60).")
    ] = None,
    learning_rate: Annotated[
        float | None,
        typer.Option("--learning-rate", "--lr", help="lora: learning rate (default 2e-4)."),
    ] = None,
    rank: Annotated[
        int | None, typer.Option("--rank", help="lora: the adapter's rank (default 8).")
    ] = None,
    max_length: Annotated[
        int | None,
        typer.Option("--max-length", help="lora: tokens per example, prompt cut first (1024)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Train a model on SCENARIO's stored runs, register the checkpoint, and serve it only if
    it wins its matched trials against the current competitor."""
    from ..app.training import train

    given = {"steps": steps, "learning_rate": learning_rate, "rank": rank}
    given["max_length"] = max_length
    options = {name: value for name, value in given.items() if value is not None}
    done = train(scenario, backend, base, options)
    if as_json:
        print_json(done)
        return
    data, checkpoint, promotion = done["dataset"], done["checkpoint"], done["promotion"]
    metrics = checkpoint["metrics"]
    state = "new" if checkpoint["new"] else "already registered"
    if checkpoint["backend"] == "lora":
        held = metrics["heldout_loss"]
        sys.stdout.write(
            f"dataset: {data['records']} kept generations from {data['runs']} runs, hash "
            f"{data['data_hash'][:12]}\n"
            f"checkpoint {checkpoint['id']} (lora on {checkpoint['base']}, {state}): train "
            f"loss {metrics['train_loss_first']:.4f} -> {metrics['train_loss_last']:.4f} over "
            f"{metrics['steps']} steps; held-out loss "
            + (
                f"{held:.4f} (base {metrics['heldout_loss_base']:.4f})"
                if held is not None
                else "none (too few records)"
            )
            + f"\nadapter: {checkpoint['adapter']}\n"
        )
    else:
        sys.stdout.write(
            f"dataset: {data['matches']} matches of {data['strategies']} strategies from "
            f"{data['runs']} runs ({data['skipped']} whose strategy is not stored), hash {data['data_hash'][:12]}\n"
            f"checkpoint {checkpoint['id']} ({checkpoint['backend']}, {state}): held-out R² "
            f"{metrics['heldout_r2']:+.4f}, MAE {metrics['heldout_mae']:.4f} (mean predictor: "
            f"R² {metrics['mean_predictor_r2']:+.4f}, MAE {metrics['mean_predictor_mae']:.4f})\n"
        )
    if promotion["decision"] == "not trialled":
        sys.stdout.write(f"not trialled: {promotion['rationale']}\n")
        return
    failed = promotion.get("no_strategy", {}).get("candidate", 0)
    sys.stdout.write(
        f"promotion against {promotion['incumbent']}: {promotion['decision']} at "
        f"{promotion['stage']} ({promotion['statistic']}); {promotion['trials']} trials, "
        f"{promotion['plays']} plays"
        + (f", {failed} proposals without a playable strategy" if failed else "")
        + f"\n  {promotion['rationale']}\n"
        f"{'activated' if promotion['activated'] else 'not served'}; "
        f"{done['seconds']['total']:.1f} s\n"
    )


def _line(item: dict[str, Any], active: set[str]) -> str:
    metrics = item["metrics"]
    mark = " (active)" if item["id"] in active else ""
    if item["backend"] == "lora":
        held = metrics.get("heldout_loss")
        return (
            f"{item['id']}{mark} {item['scope']} lora {item['base']} train loss "
            f"{metrics.get('train_loss_last', 0):.4f}"
            + (f", held-out {held:.4f}" if held is not None else "")
            + f" on {metrics.get('records', 0)} records, {item['created_at']}"
        )
    return (
        f"{item['id']}{mark} {item['scope']} {item['backend']} {item['base']} "
        f"R² {metrics.get('heldout_r2', 0):+.4f} on {metrics.get('examples', 0)} matches, "
        f"{item['created_at']}"
    )


def list_command(
    scenario: Annotated[str | None, typer.Option("--scenario", help=SCENARIO_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Registered checkpoints, newest first, and which one each scenario is served."""
    from ..app.training import list_models

    listed = list_models(scenario)
    if as_json:
        print_json(listed)
        return
    if not listed["checkpoints"]:
        sys.stdout.write("no checkpoints (train one with `lessonloop train SCENARIO`)\n")
    active = {pointer["ref"] for pointer in listed["active"]}
    for item in listed["checkpoints"]:
        sys.stdout.write(_line(item, active) + "\n")


def show_command(
    ident: Annotated[str, typer.Argument(metavar="ID", help="A checkpoint id (ckpt-...).")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """One checkpoint: metrics, data hash, fitted parameters and its promotion decisions."""
    from ..app.training import show_model

    found = show_model(ident)
    if as_json:
        print_json(found)
        return
    sys.stdout.write(_line(found, {found["id"]} if found["active"] else set()) + "\n")
    sys.stdout.write(f"data hash {found['data_hash']}; roles {', '.join(found['roles'])}\n")
    if "adapter" in found:
        sys.stdout.write(
            f"adapter {found['adapter']} (sha256 {found['params']['sha256']}) on {found['base']}\n"
        )
    for key, value in found["metrics"].items():
        sys.stdout.write(f"  {key}: {value}\n")
    for candidate in found["promotions"]:
        for decision in candidate["decisions"]:
            sys.stdout.write(
                f"  [{candidate['id']}] {decision['action']} by {decision['actor']} at "
                f"{decision['at']}: {decision['rationale']}\n"
            )


def activate_command(
    ident: Annotated[str, typer.Argument(metavar="ID", help="A checkpoint id (ckpt-...).")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Serve a checkpoint as its scenario's competitor by hand (recorded as yours)."""
    from ..app.training import activate_model

    pointer = activate_model(ident)
    if as_json:
        print_json(pointer)
    else:
        before = pointer["previous_ref"] or "the offline agent"
        sys.stdout.write(
            f"{pointer['scope']} competitor: {pointer['ref']} (rollback target: {before})\n"
        )


def rollback_command(
    scenario: Annotated[str, typer.Argument(metavar="SCENARIO", help=SCENARIO_HELP)],
    reason: Annotated[
        str, typer.Option("--reason", help="Why (kept with the decision).")
    ] = "rolled back by hand",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Serve SCENARIO the competitor active before its last switch (recorded as yours)."""
    from ..app.training import rollback_model

    pointer = rollback_model(scenario, reason)
    if as_json:
        print_json(pointer)
    else:
        back = pointer["ref"] or "the offline agent (the default)"
        sys.stdout.write(f"{pointer['scope']} competitor: back to {back}\n")
