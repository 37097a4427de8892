"""Every provider, registered in one place: its name, how it is written on the command line,
where it is reached, which variables hold its key and endpoint, and where its code lives.

``config`` (names, default URLs, key variables), ``registry.build`` (the lazy import), ``doctor``
(which endpoints get the server checks) and ``--help`` (the list of names) all read this
table, so a new provider is one ``register(ProviderSpec(...))`` here. Standard library only and
nothing imported until a route names a provider: config (and so the hooks) import this module.
"""

from __future__ import annotations

from urllib.parse import urlsplit

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this module)
if TYPE_CHECKING:
    from collections.abc import Callable


class ProviderSpec:
    """One provider. ``factory`` is ``"package.module:callable"``, imported only when a route
    names the provider; the callable takes ``(route, settings)`` and returns the provider (and
    raises a UsageError for what is missing). (A plain class: a dataclass costs ``--help`` a
    millisecond and a half to make.)"""

    __slots__ = (
        "name",
        "factory",
        "wire",
        "default_base_url",
        "key_variable",
        "endpoint_variable",
        "read_endpoint",
        "argument_variable",
        "usage",
        "sdk_adds_v1",
        "context_setting",
    )

    def __init__(
        self,
        name: str,
        factory: str,
        *,
        wire: str = "builtin",
        default_base_url: str | None = None,
        key_variable: str | None = None,
        endpoint_variable: str | None = None,
        read_endpoint: Callable[[str], str] | None = None,
        argument_variable: str | None = None,
        usage: str | None = None,
        sdk_adds_v1: bool = False,
        context_setting: str | None = None,
    ):
        self.name = name
        self.factory = factory
        # "builtin": runs in the process, no endpoint; "anthropic": the Messages API;
        # "openai": the Chat Completions API (OpenAI and every preset of a local server)
        self.wire = wire
        self.default_base_url = default_base_url
        self.key_variable = key_variable  # its own key variable (as its SDK reads it)
        self.endpoint_variable = endpoint_variable  # its own endpoint variable, followed when
        #                                             lessonloop sets no base URL
        self.read_endpoint = read_endpoint  # how that variable is read (else as a URL)
        self.argument_variable = argument_variable  # a builtin's argument when the name has none
        self.usage = usage  # how --help writes it (default: the name)
        self.sdk_adds_v1 = sdk_adds_v1  # the SDK appends /v1/... itself: no "/v1"
        self.context_setting = context_setting  # where the server's context window is raised

    @property
    def remote(self) -> bool:
        """Its calls go to an endpoint (and may cost money)."""
        return self.wire != "builtin"

    def load(self) -> Callable:
        """The factory, imported now."""
        import importlib

        module, _, attribute = self.factory.partition(":")
        return getattr(importlib.import_module(module), attribute)


PROVIDERS: dict[str, ProviderSpec] = {}  # by name, in the order they were registered


def register(spec: ProviderSpec) -> ProviderSpec:
    """Add ``spec`` (a name is registered once)."""
    if spec.name in PROVIDERS:
        raise ValueError(f"provider {spec.name!r} is already registered")
    PROVIDERS[spec.name] = spec
    return spec


def names() -> tuple[str, ...]:
    return tuple(PROVIDERS)


def spec(name: str) -> ProviderSpec | None:
    return PROVIDERS.get(name)


def is_remote(name: str) -> bool:
    """Whether ``name`` is a registered provider that reaches an endpoint."""
    found = PROVIDERS.get(name)
    return found is not None and found.remote


def key_variable(name: str) -> str | None:
    """The provider's own key variable (ANTHROPIC_API_KEY), if it has one."""
    found = PROVIDERS.get(name)
    return found.key_variable if found else None


def help_text() -> str:
    """The names as ``--provider``'s help lists them: "local (default), scripted:FILE, …, x or y"."""
    written = [p.usage or p.name for p in PROVIDERS.values()]
    written[0] += " (default)"
    return ", ".join(written[:-1]) + " or " + written[-1]


def ollama_url(host: str) -> str:
    """OLLAMA_HOST read as the ollama client reads it: ``[scheme://]host[:port][/path]``, http
    and port 11434 without a scheme, the scheme's port with one; an address that means "every
    interface" to a server (0.0.0.0, ::) is this machine to a client. The route wants the
    OpenAI-compatible ``/v1``. (Unreadable: returned as it is, for the URL check to report.)"""
    scheme, has_scheme, rest = host.partition("://")
    if not has_scheme:
        scheme, rest = "http", host
    authority, _, path = rest.partition("/")
    try:
        parts = urlsplit(f"{scheme}://{authority}")
        name, port = parts.hostname or "", parts.port
    except ValueError:
        return host
    name = "127.0.0.1" if name in ("", "0.0.0.0", "::") else name
    port = port or (443 if scheme == "https" else 80 if has_scheme else 11434)
    path = "/" + path.strip("/") if path.strip("/") else ""
    url = f"{scheme}://{'[%s]' % name if ':' in name else name}:{port}{path}"
    return url if url.endswith("/v1") else url + "/v1"


# The first one is the default.
_HERE = "lessonloop.providers."
register(ProviderSpec("local", _HERE + "local:provider_for"))
register(
    ProviderSpec(
        "scripted",
        _HERE + "scripted:provider_for",
        argument_variable="LESSONLOOP_SCRIPT",
        usage="scripted:FILE",
    )
)
# a registered checkpoint as the competitor (the other roles: the offline agent's)
register(ProviderSpec("trained", "lessonloop.training.provider:provider_for", usage="trained:ID"))
register(
    ProviderSpec(
        "anthropic",
        _HERE + "anthropic:AnthropicProvider",
        wire="anthropic",
        default_base_url="https://api.anthropic.com",
        key_variable="ANTHROPIC_API_KEY",
        endpoint_variable="ANTHROPIC_BASE_URL",
        sdk_adds_v1=True,
    )
)
register(
    ProviderSpec(
        "openai",
        _HERE + "openai:OpenAIProvider",
        wire="openai",
        default_base_url="https://api.openai.com/v1",
        key_variable="OPENAI_API_KEY",
        endpoint_variable="OPENAI_BASE_URL",
    )
)
# Presets: the OpenAI wire format at a local server's usual address. They have no key variable,
# so OPENAI_API_KEY cannot leak to them.
register(
    ProviderSpec(
        "ollama",
        _HERE + "openai:OpenAIProvider",
        wire="openai",
        default_base_url="http://localhost:11434/v1",
        endpoint_variable="OLLAMA_HOST",
        read_endpoint=ollama_url,
        context_setting="OLLAMA_CONTEXT_LENGTH on the Ollama server (or the model's num_ctx)",
    )
)
register(
    ProviderSpec(
        "vllm",
        _HERE + "openai:OpenAIProvider",
        wire="openai",
        default_base_url="http://localhost:8000/v1",
        context_setting="vLLM's --max-model-len",
    )
)
register(
    ProviderSpec(
        "llamacpp",
        _HERE + "openai:OpenAIProvider",
        wire="openai",
        default_base_url="http://127.0.0.1:8080/v1",
        context_setting="the llama.cpp server's --ctx-size (per slot with --parallel)",
    )
)
register(
    ProviderSpec(
        "lmstudio",
        _HERE + "openai:OpenAIProvider",
        wire="openai",
        default_base_url="http://127.0.0.1:1234/v1",
        context_setting="the context length LM Studio loads the model with",
    )
)
