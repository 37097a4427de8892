"""A provider is registered in one place (providers/catalog.py): settings, the build, doctor and
``--help`` all follow one registration, shown here by adding one."""

from __future__ import annotations

import re

import pytest

from lessonloop import config
from lessonloop.providers import catalog
from lessonloop.providers.registry import build

ACME = catalog.ProviderSpec(
    "acme",
    "lessonloop.providers.openai:OpenAIProvider",
    wire="openai",
    default_base_url="http://127.0.0.1:9/v1",  # nothing listens there
    key_variable="ACME_API_KEY",
    endpoint_variable="ACME_BASE_URL",
    context_setting="acme's --window",
)


@pytest.fixture
def acme(monkeypatch):
    """The one change a new provider needs: its registration (undone after the test)."""
    monkeypatch.setitem(catalog.PROVIDERS, "acme", ACME)
    return ACME


def test_a_registered_provider_is_routed_with_its_url_key_and_endpoint_variable(acme):
    settings = config.load(environ={"LESSONLOOP_PROVIDER": "acme:big", "ACME_API_KEY": "k1"})
    route = settings.route("coach")
    assert route == config.Route("acme", "big", "http://127.0.0.1:9/v1")
    assert settings.api_key(route) == ("k1", "ACME_API_KEY")
    moved = config.load(
        environ={
            "LESSONLOOP_PROVIDER": "acme",
            "LESSONLOOP_MODEL": "m",
            "ACME_BASE_URL": "http://127.0.0.1:7/v1/",
        }
    )
    assert moved.route("judge").base_url == "http://127.0.0.1:7/v1"
    provider = build(route, settings)
    assert provider.name == "acme" and provider.api_key == "k1"


def test_an_unregistered_provider_is_refused_with_the_registered_names(acme):
    with pytest.raises(config.UsageError, match="valid providers: local, scripted, .*, acme$"):
        config.load(environ={"LESSONLOOP_PROVIDER": "acne"}).route("coach")


def test_doctor_checks_a_registered_provider_as_an_openai_compatible_server(acme, cli, monkeypatch):
    monkeypatch.setenv("LESSONLOOP_PROVIDER", "acme")
    monkeypatch.setenv("LESSONLOOP_MODEL", "m")
    result = cli("doctor")
    assert result.code == 1
    assert re.search(r"FAIL acme http://127.0.0.1:9/v1.*connection", result.out)


def test_run_help_lists_every_registered_provider(acme):
    import typer
    from typer.main import get_command

    from lessonloop.cli import run

    app = typer.Typer()
    run.register(app)  # (the help is written when the command is defined)
    command = get_command(app).commands["run"]
    [option] = [p for p in command.params if p.name == "provider"]
    assert option.help.startswith(
        "local (default), scripted:FILE, trained:ID, anthropic, openai, ollama, "
        "vllm, llamacpp, lmstudio or acme; every role"
    )


def test_the_built_in_registrations_are_what_settings_and_help_have_always_said():
    assert config.PROVIDERS == (
        "local",
        "scripted",
        "trained",
        "anthropic",
        "openai",
        "ollama",
        "vllm",
        "llamacpp",
        "lmstudio",
    )
    assert config.REMOTE == ("anthropic", "openai", "ollama", "vllm", "llamacpp", "lmstudio")
    assert config.KEY_VARIABLES == {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
    assert config.ENDPOINT_VARIABLES == {
        "anthropic": "ANTHROPIC_BASE_URL",
        "openai": "OPENAI_BASE_URL",
        "ollama": "OLLAMA_HOST",
    }
    assert catalog.help_text() == (
        "local (default), scripted:FILE, trained:ID, anthropic, openai, ollama, vllm, llamacpp "
        "or lmstudio"
    )
    with pytest.raises(ValueError, match="already registered"):
        catalog.register(catalog.ProviderSpec("local", "lessonloop.providers.local:provider_for"))
