"""``doctor`` (routes, endpoints, config, stores) and ``usage`` (calls, tokens, cost): each
prints what ``app/doctor.py`` and ``app/usage.py`` answer. ``fast.py`` calls them without Typer."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

from .output import print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer


def doctor_command(
    provider: Annotated[
        str | None,
        typer.Option("--provider", help="Check this provider for every role instead."),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Check with this model.")] = None,
    latency: Annotated[
        bool | None,
        typer.Option(
            "--latency/--no-latency",
            help="Time one tiny completion per endpoint against the roles' timeouts (default: loopback endpoints only; a hosted API may charge for it).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> int:
    """Show each role's route and whether its endpoint answers, serves the model, holds the
    largest prompt and answers within the timeouts; check config and stores."""
    from ..app.doctor import doctor

    report = doctor(provider, model, latency)
    if as_json:
        print_json(report)
    else:
        config = report["config"]
        out = [
            f"config: {config['path']}" + ("" if config["exists"] else " (none; defaults apply)"),
            f"offline mode: {'on' if report['offline'] else 'off'}",
            "routes:",
        ]
        for role, route in report["routes"].items():
            target = " ".join(
                part for part in (route["provider"], route["model"], route["base_url"]) if part
            )
            out.append(f"  {role:<11} {target}")
        out.append("endpoints:")
        for endpoint in report["endpoints"]:
            out += _endpoint_lines(endpoint)
        for name in ("store", "user_store"):
            store = report[name]
            out.append(
                f"{name.replace('_', ' ')}: {'ok  ' if store['ok'] else 'FAIL'} "
                f"{store['path']}: {store['detail']}"
            )
        sys.stdout.write("\n".join(out) + "\n")
    return 0 if report["ok"] else 1


def usage_command(
    run_id: Annotated[str | None, typer.Option("--run", help="Only this run's calls.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the totals as JSON.")] = False,
) -> None:
    """Provider calls, tokens and cost, in total and per role (all runs, or one)."""
    from ..app.usage import usage

    report = usage(run_id)
    if as_json:
        print_json(report)
        return
    out = [
        f"{report['calls']} calls, {report['input_tokens']} tokens in, "
        f"{report['output_tokens']} out, {report['retries']} retries, cost "
        f"{_money(report['cost'])}"
    ]
    for role, part in report["by_role"].items():
        out.append(
            f"  {role:<11} {part['calls']:>5} calls {part['input_tokens']:>9} in "
            f"{part['output_tokens']:>9} out  {_money(part['cost'])}"
        )
    if report["unpriced_calls"]:
        out.append(
            f"{report['unpriced_calls']} calls used a model with no known price: add "
            'it as [prices."MODEL"] input and output (USD per million tokens) in '
            "config.toml"
        )
    sys.stdout.write("\n".join(out) + "\n")


def _endpoint_lines(endpoint: dict) -> list[str]:
    """An endpoint's status line, then its model list, context and latency."""
    key = f", key from {endpoint['key']}" if endpoint["key"] else ""
    where = " ".join(part for part in (endpoint["provider"], endpoint["base_url"]) if part)
    # context and latency problems are told on their own lines below
    told = {(endpoint[name] or {}).get("detail") for name in ("context", "latency")}
    head = "; ".join(problem for problem in endpoint["problems"] if problem not in told)
    head = head or endpoint["models_detail"] or endpoint["detail"]
    lines = [f"  {'ok  ' if endpoint['ok'] else 'FAIL'} {where}{key}: {head}"]
    details = []
    if endpoint["models"]:
        models = endpoint["models"]
        details.append(f"models:  {', '.join(models[:10])}{' ...' if len(models) > 10 else ''}")
    for name in ("context", "latency"):
        part = endpoint[name]
        if part and endpoint["model_served"] is not False:
            status = {True: "ok", False: "FAIL", None: "?"}[part.get("ok")]
            details.append(f"{name}: {status} {part['detail']}")
    return lines + ["         " + line for line in details]


def _money(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"
