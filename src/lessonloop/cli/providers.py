"""``doctor`` (routes, endpoints, config, store) and ``usage`` (calls, tokens, cost)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .output import print_json

if TYPE_CHECKING:  # Typer is imported by register() only: the fast path needs none
    import typer


def _endpoint(route, roles: list[str], settings, latency: bool | None = None) -> dict:
    """Build the route's provider (offline mode, model, key and SDK are checked there) and ask
    the endpoint whether it answers. On an OpenAI-compatible endpoint also: whether it serves
    the model, how large its context window is and, on loopback (or with ``latency``), whether
    each role's timeout fits the largest call. Never prints or returns a key."""
    from ..errors import LessonloopError
    from ..providers import catalog
    from ..providers.registry import build

    key_source = settings.api_key(route)[1] if route.base_url else None
    report = {
        "provider": route.provider,
        "model": route.model,
        "base_url": route.base_url,
        "roles": roles,
        "key": key_source,
        "ok": False,
        "detail": "",
        "problems": [],
        "models": None,
        "models_source": None,
        "model_served": None,
        "models_detail": None,
        "context": None,
        "latency": None,
    }
    try:
        provider = build(route, settings)
        if catalog.PROVIDERS[route.kind].wire == "openai":
            _server_checks(provider, report, roles, settings, latency)
        else:
            check = getattr(provider, "check", None)
            report["detail"] = check() if check else "built in; nothing to reach"
            if route.base_url:
                report["latency"] = {
                    "measured": False,
                    "ok": None,
                    "timeouts": {role: settings.timeout(role, route) for role in roles},
                    "detail": "not measured: the latency probe speaks the OpenAI Chat "
                    "Completions API",
                }
    except LessonloopError as exc:
        report["problems"].append(exc.message)
    report["ok"] = not report["problems"]
    if report["problems"]:
        report["detail"] = "; ".join(report["problems"])
    return report


def _server_checks(
    provider, report: dict, roles: list[str], settings, latency: bool | None
) -> None:
    """The model list, the context window and the latency probe (providers/probe.py)."""
    from ..loop.context import TOKEN_BUDGET
    from ..providers.probe import ServerProbe

    probe = ServerProbe(provider, largest_prompt=TOKEN_BUDGET)
    listing = probe.models()  # an endpoint that does not answer raises: nothing else to check
    report.update(
        models=listing["ids"],
        models_source=listing["source"],
        model_served=listing["served"],
        models_detail=listing["detail"],
        detail=listing["detail"],
    )
    timeouts = {role: settings.timeout(role, provider.route) for role in roles}
    if listing["served"] is False:
        report["problems"].append(listing["detail"])
        skipped = "not checked: the model is not served"
        report["context"] = {"ok": None, "detail": skipped}
        report["latency"] = {"measured": False, "ok": None, "timeouts": timeouts, "detail": skipped}
        return
    report["context"] = probe.context()
    if report["context"]["ok"] is False:
        report["problems"].append(report["context"]["detail"])
    measure = probe.loopback if latency is None else latency
    if measure:
        report["latency"] = probe.latency(timeouts)
        if report["latency"]["ok"] is False:
            report["problems"].append(report["latency"]["detail"])
    else:
        why = (
            "--no-latency"
            if latency is False
            else "not a loopback endpoint, where a completion may cost money; --latency measures it"
        )
        report["latency"] = {
            "measured": False,
            "ok": None,
            "timeouts": timeouts,
            "detail": f"not measured ({why})",
        }


def _store_check(root) -> dict:
    """Integrity of the store under ``root`` (``PRAGMA quick_check``)."""
    from .. import paths
    from ..errors import LessonloopError
    from ..store import open_store

    path = paths.db_path(root)
    if not path.exists():
        return {
            "path": str(path),
            "ok": True,
            "detail": "no database yet; the first run creates it",
        }
    try:
        with open_store(root, readonly=True) as store:
            rows = store.query("PRAGMA quick_check(20)")
    except LessonloopError as exc:
        return {"path": str(path), "ok": False, "detail": exc.message}
    # a verdict is one row per problem, and a row may hold several lines ("*** in database
    # main ***" then the problem): the report shows them on one line
    problems = [
        line.strip()
        for row in rows
        for line in str(row[0]).splitlines()
        if line.strip() and not line.startswith("*** in database")
    ]
    if problems == ["ok"]:
        return {"path": str(path), "ok": True, "detail": "integrity ok"}
    return {
        "path": str(path),
        "ok": False,
        "detail": "integrity check failed: "
        + "; ".join(problems)
        + "; restore a backup or move the file aside",
    }


def _usage(rows) -> dict:
    """Totals over ledger rows; cost is null as soon as one call's price is unknown."""

    def total(selected) -> dict:
        costs = [r["cost"] for r in selected]
        unpriced = sum(r["calls"] for r in selected if r["cost"] is None)
        return {
            "calls": sum(r["calls"] for r in selected),
            "input_tokens": sum(r["input_tokens"] or 0 for r in selected),
            "output_tokens": sum(r["output_tokens"] or 0 for r in selected),
            "cost": None if unpriced else round(sum(costs), 8),
            "unpriced_calls": unpriced,
            "retries": sum(r["retries"] for r in selected),
        }

    result = total(rows)
    result["by_role"] = {
        role: total([r for r in rows if r["role"] == role])
        for role in sorted({r["role"] for r in rows})
    }
    result["by_model"] = {
        model: total([r for r in rows if (r["model"] or r["provider"]) == model])
        for model in sorted({r["model"] or r["provider"] for r in rows})
    }
    return result


def _endpoint_lines(e: dict) -> list[str]:
    """The model list, context and latency under an endpoint's status line."""
    lines = []
    if e["models"]:
        shown = ", ".join(e["models"][:10]) + (" ..." if len(e["models"]) > 10 else "")
        lines.append(f"models:  {shown}")
    for name in ("context", "latency"):
        part = e[name]
        if part and e["model_served"] is not False:
            status = {True: "ok", False: "FAIL", None: "?"}[part.get("ok")]
            lines.append(f"{name}: {status} {part['detail']}")
    return ["         " + line for line in lines]


def _money(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def doctor_command(
    provider: str | None = None,
    model: str | None = None,
    latency: bool | None = None,
    as_json: bool = False,
) -> int:
    """``doctor``: exit code 1 when an endpoint or a store is not healthy."""
    from .. import config, paths

    settings = config.load(flags={"PROVIDER": provider, "MODEL": model})
    routes = settings.routes()
    grouped: dict = {}
    for role, route in routes.items():
        grouped.setdefault(route, []).append(role)
    endpoints = [_endpoint(route, roles, settings, latency) for route, roles in grouped.items()]
    path = config.config_path()
    report = {
        "routes": {role: route.to_dict() for role, route in routes.items()},
        "endpoints": endpoints,
        "offline": settings.offline,
        "config": {"path": str(path), "exists": path.exists()},
        "store": _store_check(paths.home()),
        "user_store": _store_check(paths.user_home()),
    }
    report["ok"] = (
        all(e["ok"] for e in endpoints) and report["store"]["ok"] and report["user_store"]["ok"]
    )
    if as_json:
        print_json(report)
    else:
        out = [
            f"config: {path}" + ("" if path.exists() else " (none; defaults apply)"),
            f"offline mode: {'on' if settings.offline else 'off'}",
            "routes:",
        ]
        for role, route in routes.items():
            target = " ".join(p for p in (route.provider, route.model, route.base_url) if p)
            out.append(f"  {role:<11} {target}")
        out.append("endpoints:")
        for e in endpoints:
            key = f", key from {e['key']}" if e["key"] else ""
            where = " ".join(p for p in (e["provider"], e["base_url"]) if p)
            # context and latency problems are told on their own lines below
            told = {(e[name] or {}).get("detail") for name in ("context", "latency")}
            head = "; ".join(p for p in e["problems"] if p not in told)
            head = head or e["models_detail"] or e["detail"]
            out.append(f"  {'ok  ' if e['ok'] else 'FAIL'} {where}{key}: {head}")
            out.extend(_endpoint_lines(e))
        for name in ("store", "user_store"):
            store = report[name]
            out.append(
                f"{name.replace('_', ' ')}: {'ok  ' if store['ok'] else 'FAIL'} "
                f"{store['path']}: {store['detail']}"
            )
        sys.stdout.write("\n".join(out) + "\n")
    return 0 if report["ok"] else 1


def usage_command(run_id: str | None = None, as_json: bool = False) -> None:
    """``usage``: provider calls, tokens and cost, in total and per role."""
    from ..store import open_store
    from ..store import runs as run_store

    with open_store(readonly=True) as store:
        if run_id is not None:
            run_store.get_run(store, run_id)
            rows = run_store.provider_calls(store, run_id)
        else:
            rows = store.query("SELECT * FROM provider_calls ORDER BY id")
    report = _usage(rows)
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


def register(app: typer.Typer) -> None:
    import typer

    @app.command()
    def doctor(
        provider: str | None = typer.Option(
            None, "--provider", help="Check this provider for every role instead."
        ),
        model: str | None = typer.Option(None, "--model", help="Check with this model."),
        latency: bool | None = typer.Option(
            None,
            "--latency/--no-latency",
            help="Time one tiny completion per endpoint against the roles' timeouts (default: loopback endpoints only; a hosted API may charge for it).",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    ) -> int:
        """Show each role's route and whether its endpoint answers, serves the model, holds the
        largest prompt and answers within the timeouts; check config and stores."""
        return doctor_command(provider, model, latency, as_json)

    @app.command()
    def usage(
        run_id: str | None = typer.Option(None, "--run", help="Only this run's calls."),
        as_json: bool = typer.Option(False, "--json", help="Print the totals as JSON."),
    ) -> None:
        """Provider calls, tokens and cost, in total and per role (all runs, or one)."""
        usage_command(run_id, as_json)
