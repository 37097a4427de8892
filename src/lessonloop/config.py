"""One settings object: defaults < ``.lessonloop/config.toml`` < environment < flags.

Keys are the environment's without the ``LESSONLOOP_`` prefix: ``PROVIDER``, ``MODEL``,
``BASE_URL``, ``API_KEY``, ``OFFLINE``, ``TIMEOUT``, ``MAX_RETRIES``, ``CONNECT_WAIT``,
``STRUCTURED_OUTPUT`` and, per role, ``<ROLE>_PROVIDER``, ``<ROLE>_MODEL``,
``<ROLE>_BASE_URL``, ``<ROLE>_TIMEOUT``. The config file may spell them in
lower case, as ``LESSONLOOP_…`` names, or per role as ``[roles.coach]`` tables; it also holds
``[prices."model"]`` tables (USD per million input and output tokens).

Within one layer a role's own key beats the global one; a higher layer beats a lower one. The
global model, base URL and key go with the global provider: a role routed elsewhere does not
inherit them.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from . import paths
from .errors import UsageError
from .providers import catalog

ROLES = ("competitor", "translator", "analyst", "coach", "curator", "judge")
# Read from the provider registry (providers/catalog.py), where a provider is added; Settings
# asks the registry itself, so these name the providers registered when config was imported.
PROVIDERS = catalog.names()
# providers that talk to an endpoint; all but anthropic speak the OpenAI Chat Completions API
REMOTE = tuple(name for name, spec in catalog.PROVIDERS.items() if spec.remote)
DEFAULT_BASE_URLS = {
    name: spec.default_base_url for name, spec in catalog.PROVIDERS.items() if spec.default_base_url
}
KEY_VARIABLES = {
    name: spec.key_variable for name, spec in catalog.PROVIDERS.items() if spec.key_variable
}
# A provider's own endpoint variable (a gateway or proxy set up for Claude Code or the SDK) is
# followed when lessonloop's own setting is absent, as the provider's SDK or CLI would.
ENDPOINT_VARIABLES = {
    name: spec.endpoint_variable
    for name, spec in catalog.PROVIDERS.items()
    if spec.endpoint_variable
}
ROLE_FIELDS = ("PROVIDER", "MODEL", "BASE_URL")  # what a route is made of
ROLE_SETTINGS = ROLE_FIELDS + ("TIMEOUT",)  # what may be set per role
GLOBAL_KEYS = ROLE_FIELDS + (
    "API_KEY",
    "OFFLINE",
    "TIMEOUT",
    "MAX_RETRIES",
    "CONNECT_WAIT",
    "STRUCTURED_OUTPUT",
)
KNOWN_KEYS = frozenset(GLOBAL_KEYS) | {f"{r.upper()}_{f}" for r in ROLES for f in ROLE_SETTINGS}
DEFAULTS = {"PROVIDER": "local", "OFFLINE": "0", "MAX_RETRIES": "4", "CONNECT_WAIT": "90"}
# Seconds a call may take when no timeout is set: a hosted API answers in seconds; a model on
# a CPU behind a loopback server takes ~40 s to read a 1,500-token prompt before it writes.
REMOTE_TIMEOUT, LOOPBACK_TIMEOUT = 60.0, 600.0
# How an endpoint is asked for JSON: its native JSON-Schema mode, plain JSON mode, or the
# schema in words. Detected per endpoint (stepping down when it refuses one) unless configured.
STRUCTURED_MODES = ("json_schema", "json_object", "text")

# USD per million tokens (input, output): published list prices, for the cost column. Extend
# or correct them in config.toml; a model not listed has no cost (null), never a guess.
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
}


@dataclass(frozen=True)
class Route:
    """Where one role's calls go. Never holds a key: routes are stored and printed."""

    provider: str  # a name from PROVIDERS, or scripted:FILE
    model: str | None = None
    base_url: str | None = None

    @property
    def kind(self) -> str:
        return self.provider.partition(":")[0]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Settings:
    layers: list[tuple[str, dict[str, str]]]  # (source name, flat keys), lowest first
    prices: dict[str, tuple[float, float]]
    environ: Mapping[str, str]
    # config.toml's [promotion] table: the charter of ambient promotion (promotion/charter.py)
    promotion: dict[str, object] = field(default_factory=dict)

    def value(self, key: str, default: str | None = None) -> str | None:
        return self.lookup(key)[0] or default

    def lookup(self, *keys: str) -> tuple[str | None, str | None]:
        """The first of ``keys`` set in the highest layer, and that layer's name."""
        for source, layer in reversed(self.layers):
            for key in keys:
                if layer.get(key) not in (None, ""):
                    return layer[key], source
        return None, None

    def route(self, role: str) -> Route:
        prefix = role.upper() + "_"
        provider, _ = self.lookup(prefix + "PROVIDER", "PROVIDER")
        provider = (provider or "local").strip()
        global_provider = (self.value("PROVIDER") or "local").strip()
        # the global model and URL go with the global provider, or with any remote one when
        # the global provider is local (the same rule as for the key)
        shared = provider == global_provider or not catalog.is_remote(
            global_provider.partition(":")[0].lower()
        )
        model, _ = self.lookup(prefix + "MODEL", *(["MODEL"] if shared else []))
        base_url, _ = self.lookup(prefix + "BASE_URL", *(["BASE_URL"] if shared else []))
        name, _, argument = provider.partition(":")
        name = name.lower()
        spec = catalog.spec(name)
        if spec is None:
            raise UsageError(
                f"unknown provider {provider!r} for the {role}; valid providers: "
                f"{', '.join(catalog.names())}"
            )
        if spec.remote:
            if argument:  # openai:gpt-4o-mini is shorthand for the provider and its model
                model, argument = argument, ""
            url = _checked_url((base_url or default_base_url(name, self.environ)).rstrip("/"), role)
            return Route(name, model, route_url(name, url))
        variable = spec.argument_variable
        if variable:  # scripted:FILE, or the file from LESSONLOOP_SCRIPT
            argument = argument or self.environ.get(variable, "")
        takes_argument = ":" in (spec.usage or "")  # scripted:FILE, trained:ID; local takes none
        return Route(f"{name}:{argument}" if argument and takes_argument else name)

    def routes(self) -> dict[str, Route]:
        return {role: self.route(role) for role in ROLES}

    def api_key(self, route: Route) -> tuple[str | None, str | None]:
        """The key for ``route`` and where it came from (the name, never the value).

        ``LESSONLOOP_API_KEY`` belongs to the global provider (or to any remote one when the
        global provider is local); otherwise the provider's own variable. Presets for local
        servers never fall back to ``OPENAI_API_KEY``, so that key cannot leak to them.
        """
        global_kind = (self.value("PROVIDER") or "local").partition(":")[0].lower()
        if route.kind == global_kind or not catalog.is_remote(global_kind):
            key, source = self.lookup("API_KEY")
            if key:
                return key, "LESSONLOOP_API_KEY" if source == "environment" else source
        variable = catalog.key_variable(route.kind)
        if variable and self.environ.get(variable):
            return self.environ[variable], variable
        return None, None

    @property
    def offline(self) -> bool:
        return (self.value("OFFLINE") or "0").strip().lower() in ("1", "true", "yes", "on")

    def timeout(self, role: str | None = None, route: Route | None = None) -> float:
        """Seconds one call of ``role`` may take: its own setting, the global one, else a
        default that fits the endpoint (a loopback server may run a model on a CPU)."""
        keys = ([f"{role.upper()}_TIMEOUT"] if role else []) + ["TIMEOUT"]
        text, source = self.lookup(*keys)
        if text is None:
            return (
                LOOPBACK_TIMEOUT if route and is_loopback(route.base_url or "") else REMOTE_TIMEOUT
            )
        key = keys[0] if self.lookup(keys[0])[0] == text else "TIMEOUT"
        return _number(key, text, 0.1, 3600)

    @property
    def connect_wait(self) -> float:
        """Seconds a loopback endpoint that refuses connections is waited for (a local server
        restarting, or loading its model) before the call fails."""
        return _number("CONNECT_WAIT", self.value("CONNECT_WAIT"), 0, 3600)

    @property
    def structured_output(self) -> str | None:
        """The configured way to ask for JSON, or None: detect it."""
        value = (self.value("STRUCTURED_OUTPUT") or "").strip().lower()
        if value and value not in STRUCTURED_MODES:
            raise UsageError(
                f"LESSONLOOP_STRUCTURED_OUTPUT must be one of "
                f"{', '.join(STRUCTURED_MODES)}, not {value!r}"
            )
        return value or None

    @property
    def max_retries(self) -> int:
        return int(_number("MAX_RETRIES", self.value("MAX_RETRIES"), 0, 20))

    def cost(
        self, models: tuple[str | None, ...], input_tokens: int | None, output_tokens: int | None
    ) -> float | None:
        """USD for one call, or None when the price (of the first known of ``models``: the
        answering model, then the requested one) or the token counts are unknown."""
        price = self.price(*models)
        if price is None or input_tokens is None or output_tokens is None:
            return None
        return round((input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 8)

    def price(self, *models: str | None) -> tuple[float, float] | None:
        """The first model's price that is known, also under its name without a date suffix
        (endpoints answer with snapshots such as gpt-4o-mini-2024-07-18)."""
        for model in models:
            for name in (model or "", _DATED.sub("", model or "")):
                if name in self.prices:
                    return self.prices[name]
        return None

    def check_reachable(self, route: Route) -> None:
        """Offline mode refuses a non-loopback endpoint before anything connects to it."""
        if self.offline and route.base_url and not is_loopback(route.base_url):
            raise UsageError(
                f"offline mode (LESSONLOOP_OFFLINE=1) refuses {route.base_url} for "
                f"provider {route.provider}: only loopback endpoints are allowed"
            )


_DATED = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


def _number(key: str, text: str | None, low: float, high: float) -> float:
    try:
        value = float(text or "")
    except ValueError:
        value = math.nan
    if not low <= value <= high:  # also false for NaN
        raise UsageError(
            f"LESSONLOOP_{key} must be a number between {low:g} and {high:g}, not {text!r}"
        )
    return value


def default_base_url(kind: str, environ: Mapping[str, str]) -> str:
    """Where ``kind`` is reached when lessonloop sets no base URL: the provider's own variable
    (ENDPOINT_VARIABLES), else DEFAULT_BASE_URLS: both from the provider's registration."""
    spec = catalog.PROVIDERS[kind]
    value = (environ.get(spec.endpoint_variable or "", "") or "").strip().strip("\"'")
    if not value:
        # (a remote provider registered without a default URL gets "": the caller refuses it)
        return DEFAULT_BASE_URLS.get(kind) or spec.default_base_url or ""
    read = spec.read_endpoint
    return read(value) if read else value.rstrip("/")


def route_url(kind: str, url: str) -> str:
    """A route's base URL as its client wants it (the Anthropic SDK adds /v1/messages itself)."""
    url = url.rstrip("/")
    spec = catalog.spec(kind)
    return url[:-3] if spec and spec.sdk_adds_v1 and url.endswith("/v1") else url


def _checked_url(url: str, role: str) -> str:
    try:
        parts = urlsplit(url)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid:
        raise UsageError(f"the base URL for the {role} is not an http(s) URL: {url!r}")
    return url


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def config_path(root: Path | None = None) -> Path:
    return (root or paths.home()) / "config.toml"


def _file_layer(
    path: Path,
) -> tuple[dict[str, str], dict[str, tuple[float, float]], dict[str, object]]:
    """The config file's keys (flattened like the environment's), its price table and its
    ``[promotion]`` table (checked by ``promotion/charter.py`` where it is used)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, {}, {}
    except NotADirectoryError:  # the home is a file: say that, not something about config.toml
        paths.ensure_home(path.parent)
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}") from None
    flat: dict[str, str] = {}
    prices: dict[str, tuple[float, float]] = {}
    promotion: dict[str, object] = {}
    for key, value in data.items():
        if key == "prices":
            prices = _prices(path, value)
        elif key == "promotion":
            if not isinstance(value, dict):
                raise UsageError(f"{path}: [promotion] must be a table (the promotion charter)")
            promotion = value
        elif key == "roles" and isinstance(value, dict):
            for role, table in value.items():
                _role_table(path, role, table, flat)
        elif key.lower() in ROLES and isinstance(value, dict):
            _role_table(path, key.lower(), value, flat)
        else:
            _set(path, key, value, flat)
    return flat, prices, promotion


def _role_table(path: Path, role: str, table: object, flat: dict) -> None:
    if role not in ROLES or not isinstance(table, dict):
        raise UsageError(f"{path}: [roles.{role}] must be a table for one of {', '.join(ROLES)}")
    for key, value in table.items():
        _set(path, f"{role}_{key}", value, flat)


def _set(path: Path, key: str, value: object, flat: dict) -> None:
    name = key.upper().removeprefix("LESSONLOOP_")
    if name not in KNOWN_KEYS:
        raise UsageError(
            f"{path}: unknown setting {key!r}; known: "
            f"{', '.join(k.lower() for k in GLOBAL_KEYS)} and per role "
            f"[roles.<role>] provider, model, base_url, timeout"
        )
    if isinstance(value, bool):
        value = "1" if value else "0"
    if not isinstance(value, (str, int, float)):
        raise UsageError(f"{path}: {key} must be a string or a number")
    flat[name] = str(value)


def _prices(path: Path, table: object) -> dict[str, tuple[float, float]]:
    if not isinstance(table, dict):
        raise UsageError(
            f'{path}: [prices."model"] tables need input and output per million tokens'
        )
    prices = {}
    for model, price in table.items():
        try:
            low, high = float(price["input"]), float(price["output"])
        except (TypeError, KeyError, ValueError):
            raise UsageError(
                f'{path}: [prices."{model}"] needs numbers input and output '
                "(USD per million tokens)"
            ) from None
        if not (0 <= low < math.inf and 0 <= high < math.inf):
            raise UsageError(f'{path}: [prices."{model}"] prices must be non-negative')
        prices[model] = (low, high)
    return prices


def _environment_layer(environ: Mapping[str, str]) -> dict[str, str]:
    return {
        key: environ[f"LESSONLOOP_{key}"] for key in KNOWN_KEYS if f"LESSONLOOP_{key}" in environ
    }


def load(
    flags: Mapping[str, str | None] | None = None,
    environ: Mapping[str, str] | None = None,
    root: Path | None = None,
) -> Settings:
    """Settings from every layer. ``flags`` uses the same keys (``PROVIDER``, ``MODEL``)."""
    environ = os.environ if environ is None else environ
    path = config_path(root)
    from_file, prices, promotion = _file_layer(path)
    layers = [
        ("default", dict(DEFAULTS)),
        (str(path), from_file),
        ("environment", _environment_layer(environ)),
        ("flag", {k: str(v) for k, v in (flags or {}).items() if v is not None}),
    ]
    return Settings(
        layers=layers, prices={**PRICES, **prices}, environ=environ, promotion=promotion
    )
