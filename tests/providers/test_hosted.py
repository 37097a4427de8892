"""Hosted providers through the real SDKs against loopback servers in both wire formats:
success, JSON-schema output, 429 with Retry-After, 500 then success, 401, a timeout, a
malformed body; plus offline mode, missing extras and cost."""

from __future__ import annotations

import socket
import sys
import threading
import time

import pytest

from lessonloop import config
from lessonloop.errors import EndpointUnavailable, ProviderError, UsageError
from lessonloop.providers.base import Request
from lessonloop.providers.registry import build

from .fake_servers import (
    FakeServer,
    Reply,
    anthropic_error,
    anthropic_message,
    openai_completion,
    openai_error,
)

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}
KINDS = ("anthropic", "openai")


def success(kind: str, text: str = "ok", **usage) -> Reply:
    body = (
        anthropic_message(text, **usage)
        if kind == "anthropic"
        else openai_completion(text, **usage)
    )
    return Reply(body=body)


def error(kind: str, status: int, message: str = "nope", **options) -> Reply:
    return (anthropic_error if kind == "anthropic" else openai_error)(status, message, **options)


def provider_for(kind: str, server: FakeServer, **environment):
    """A provider routed to ``server`` the way a user would route it: by environment."""
    base_url = server.base_url + ("/v1" if kind == "openai" else "")
    env = {
        "LESSONLOOP_PROVIDER": kind,
        "LESSONLOOP_MODEL": f"{kind}-test-model",
        "LESSONLOOP_BASE_URL": base_url,
        "LESSONLOOP_API_KEY": "sk-test-key-123",
        "LESSONLOOP_MAX_RETRIES": "3",
        **environment,
    }
    settings = config.load(environ=env)
    return build(settings.route("competitor"), settings)


def ask(provider, text: str = "hello", **options):
    return provider.complete(
        Request(
            role="competitor",
            system="be brief",
            messages=[{"role": "user", "content": text}],
            **options,
        )
    )


@pytest.fixture
def server(home):
    with FakeServer() as running:
        yield running


def completions(server: FakeServer) -> list:
    return [r for r in server.received if r.method == "POST"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_call_returns_text_usage_model_and_sends_the_key(kind, server):
    server.queue(
        success(
            kind,
            "pong",
            **(
                {"input_tokens": 12, "output_tokens": 3}
                if kind == "anthropic"
                else {"prompt_tokens": 12, "completion_tokens": 3}
            ),
        )
    )
    completion = ask(provider_for(kind, server), "ping")
    assert completion.text == "pong"
    assert (completion.input_tokens, completion.output_tokens) == (12, 3)
    assert completion.model and completion.calls == 1 and completion.retries == 0
    assert completion.cost == 0.0, "a loopback endpoint costs nothing unless a price is set"
    request = completions(server)[0]
    assert "ping" in request.text and "be brief" in request.text
    if kind == "anthropic":  # the documented header, whatever else the SDK sends
        assert request.headers["x-api-key"] == "sk-test-key-123"
    else:
        assert request.headers["authorization"] == "Bearer sk-test-key-123"


@pytest.mark.parametrize("kind", KINDS)
def test_cost_comes_from_the_price_table_the_user_extends(kind, server, home):
    home.mkdir(parents=True, exist_ok=True)
    model = "claude-test" if kind == "anthropic" else "gpt-test"  # what the servers answer with
    (home / "config.toml").write_text(f'[prices."{model}"]\ninput = 2.0\noutput = 10.0\n')
    server.queue(success(kind))
    completion = ask(provider_for(kind, server))
    assert completion.model == model
    tokens_in, tokens_out = completion.input_tokens, completion.output_tokens
    assert completion.cost == pytest.approx((tokens_in * 2.0 + tokens_out * 10.0) / 1e6)


def test_anthropic_json_schema_output_uses_a_forced_tool(server):
    server.queue(Reply(body=anthropic_message(tool_input={"answer": 42})))
    completion = ask(provider_for("anthropic", server), json_schema=SCHEMA)
    assert completion.parsed == {"answer": 42}
    body = completions(server)[0].body
    assert body["tool_choice"]["type"] == "tool" and body["tools"][0]["input_schema"] == SCHEMA


def test_openai_json_schema_output_uses_response_format(server):
    server.queue(success("openai", '{"answer": 7}'))
    completion = ask(provider_for("openai", server), json_schema=SCHEMA)
    assert completion.parsed == {"answer": 7}
    assert completions(server)[0].body["response_format"]["json_schema"]["schema"] == SCHEMA


def test_an_endpoint_without_response_format_gets_the_schema_in_words(server):
    """json_schema, then json_object, then words; what the endpoint accepted is remembered."""
    server.queue(
        error("openai", 400, "response_format json_schema is not supported"),
        error("openai", 400, "response_format json_object is not supported"),
        success("openai", 'Sure! {"answer": 3}'),
        success("openai", '{"answer": 4}'),
    )
    completion = ask(provider_for("openai", server), json_schema=SCHEMA)
    assert completion.parsed == {"answer": 3} and completion.calls == 1
    bodies = [r.body for r in completions(server)]
    assert bodies[0]["response_format"]["type"] == "json_schema"
    assert bodies[1]["response_format"] == {"type": "json_object"}
    assert "JSON Schema" in bodies[1]["messages"][0]["content"]
    assert (
        "response_format" not in bodies[2] and "JSON Schema" in bodies[2]["messages"][0]["content"]
    )
    assert ask(provider_for("openai", server), json_schema=SCHEMA).parsed == {"answer": 4}
    assert "response_format" not in completions(server)[3].body, "a new client asks as learned"


def test_a_configured_structured_output_mode_is_used_and_never_stepped_down(server):
    server.queue(
        success("openai", '{"answer": 3}'),
        error("openai", 400, "response_format json_object is not supported"),
    )
    provider = provider_for("openai", server, LESSONLOOP_STRUCTURED_OUTPUT="json_object")
    assert ask(provider, json_schema=SCHEMA).parsed == {"answer": 3}
    assert completions(server)[0].body["response_format"] == {"type": "json_object"}
    with pytest.raises(ProviderError, match="400"):
        ask(provider, json_schema=SCHEMA)


def test_arguments_a_model_refuses_are_adapted_once_and_remembered(server):
    """Reasoning models take max_completion_tokens and no temperature; some servers no seed."""
    server.queue(
        error(
            "openai",
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this "
            "model. Use 'max_completion_tokens' instead.",
        ),
        error("openai", 400, "Unsupported value: 'temperature' does not support 0.7"),
        success("openai", "first"),
        success("openai", "second"),
    )
    provider = provider_for("openai", server)
    assert ask(provider, seed=3).text == "first"
    assert ask(provider, seed=3).text == "second"
    bodies = [r.body for r in completions(server)]
    assert "max_tokens" in bodies[0] and "temperature" in bodies[1]
    for body in bodies[2:]:
        assert body["max_completion_tokens"] == 2048 and body["seed"] == 3
        assert "max_tokens" not in body and "temperature" not in body


@pytest.mark.parametrize("kind", KINDS)
def test_an_answer_off_the_schema_gets_one_repair_round_then_a_clear_error(kind, server):
    wrong = (
        Reply(body=anthropic_message(tool_input={"answer": "many"}))
        if kind == "anthropic"
        else success(kind, '{"answer": "many"}')
    )
    right = (
        Reply(body=anthropic_message(tool_input={"answer": 5}))
        if kind == "anthropic"
        else success(kind, '{"answer": 5}')
    )
    provider = provider_for(kind, server)
    server.queue(wrong, right)
    completion = ask(provider, json_schema=SCHEMA)
    assert completion.parsed == {"answer": 5} and completion.calls == 2
    assert "does not match" in completions(server)[1].text
    server.queue(wrong, wrong)
    with pytest.raises(ProviderError, match="after one repair attempt"):
        ask(provider, json_schema=SCHEMA)


@pytest.mark.parametrize("kind", KINDS)
def test_429_waits_as_long_as_retry_after_says_then_succeeds(kind, server):
    server.queue(error(kind, 429, "slow down", headers={"retry-after": "1"}), success(kind, "done"))
    started = time.monotonic()
    completion = ask(provider_for(kind, server))
    assert time.monotonic() - started >= 0.95
    assert completion.text == "done" and completion.retries == 1 and completion.calls == 1
    assert len(completions(server)) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_server_error_is_retried_with_backoff(kind, server):
    server.queue(error(kind, 500, "boom"), error(kind, 503, "busy"), success(kind, "fine"))
    completion = ask(provider_for(kind, server))
    assert completion.text == "fine" and completion.retries == 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_wrong_key_fails_at_once_with_a_clear_error_and_no_retry(kind, server):
    server.queue(error(kind, 401, "invalid x-api-key"))
    with pytest.raises(
        ProviderError, match=r"rejected the API key \(401\): check LESSONLOOP_API_KEY"
    ):
        ask(provider_for(kind, server))
    assert len(completions(server)) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_model_is_not_retried(kind, server):
    server.queue(error(kind, 404, "model not found"))
    with pytest.raises(ProviderError, match="404.*model"):
        ask(provider_for(kind, server))
    assert len(completions(server)) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_timeout_is_retried_then_reported(kind, server):
    server.queue(
        Reply(body=anthropic_message() if kind == "anthropic" else openai_completion(), delay=2.0),
        Reply(body={}, delay=2.0),
    )
    provider = provider_for(kind, server, LESSONLOOP_TIMEOUT="0.3", LESSONLOOP_MAX_RETRIES="1")
    started = time.monotonic()
    with pytest.raises(ProviderError, match="timed out.*tried 2 times"):
        ask(provider)
    assert time.monotonic() - started < 2.5
    assert len(completions(server)) == 2


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _DownServer:
    """A loopback address where nothing listens until ``up_after`` seconds have passed."""

    def __init__(self, up_after: float):
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.started: FakeServer | None = None
        self.timer = threading.Timer(up_after, self._start)
        self.timer.start()

    def _start(self):
        self.started = FakeServer(port=self.port).__enter__()

    def close(self):
        self.timer.cancel()
        if self.started:
            self.started.__exit__(None, None, None)


@pytest.mark.parametrize("kind", KINDS)
def test_a_loopback_server_that_restarts_is_waited_for(kind):
    """Connection refused on loopback is tried again (outside the retry count) until the
    server is back, within LESSONLOOP_CONNECT_WAIT."""
    down = _DownServer(up_after=1.5)
    try:
        provider = provider_for(
            kind, down, LESSONLOOP_MAX_RETRIES="0", LESSONLOOP_CONNECT_WAIT="20"
        )
        started = time.monotonic()
        completion = ask(provider)
        assert completion.text and completion.calls == 1 and completion.retries >= 1
        assert time.monotonic() - started < 15
    finally:
        down.close()


def test_a_loopback_server_that_stays_down_stops_the_call_after_the_wait():
    down = _DownServer(up_after=3600)
    try:
        provider = provider_for("openai", down, LESSONLOOP_CONNECT_WAIT="1.5")
        started = time.monotonic()
        with pytest.raises(EndpointUnavailable, match="did not come back within 1.5 s.*resume"):
            ask(provider)
        assert 1.4 < time.monotonic() - started < 8
    finally:
        down.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "reply",
    [
        Reply(body="<html>not json</html>", headers={"content-type": "application/json"}),
        Reply(body="<html>a proxy page</html>", headers={"content-type": "text/html"}),
        Reply(body={"unexpected": 1}),
    ],
    ids=["not-json", "html", "wrong-shape"],
)
def test_a_malformed_body_is_a_clear_error(kind, reply, server):
    server.queue(reply)
    with pytest.raises(ProviderError, match="malformed"):
        ask(provider_for(kind, server, LESSONLOOP_MAX_RETRIES="0"))


def test_offline_mode_refuses_a_remote_endpoint_before_connecting(monkeypatch):
    def no_connections(*args, **kwargs):
        raise AssertionError("offline mode must not open a connection")

    monkeypatch.setattr(socket, "create_connection", no_connections)
    monkeypatch.setattr(socket.socket, "connect", no_connections)
    env = {
        "LESSONLOOP_OFFLINE": "1",
        "LESSONLOOP_PROVIDER": "openai",
        "LESSONLOOP_MODEL": "m",
        "LESSONLOOP_BASE_URL": "https://models.example.com/v1",
        "LESSONLOOP_API_KEY": "k",
    }
    settings = config.load(environ=env)
    with pytest.raises(UsageError, match="offline mode .* refuses https://models.example.com/v1"):
        build(settings.route("coach"), settings)
    anthropic = config.load(
        environ={**env, "LESSONLOOP_PROVIDER": "anthropic", "LESSONLOOP_BASE_URL": ""}
    )
    with pytest.raises(UsageError, match="refuses https://api.anthropic.com"):
        build(anthropic.route("coach"), anthropic)


def test_offline_mode_allows_loopback(server):
    server.queue(success("openai", "local answer"))
    completion = ask(provider_for("openai", server, LESSONLOOP_OFFLINE="1"))
    assert completion.text == "local answer"


def test_a_missing_sdk_gives_a_one_line_install_hint(monkeypatch, server):
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import fails as if not installed
    with pytest.raises(UsageError, match=r"pip install 'lessonloop\[anthropic\]'"):
        provider_for("anthropic", server)


def test_a_remote_endpoint_without_a_key_says_which_variable_to_set():
    settings = config.load(
        environ={"LESSONLOOP_PROVIDER": "anthropic", "LESSONLOOP_MODEL": "claude-haiku-4-5"}
    )
    with pytest.raises(ProviderError, match="set LESSONLOOP_API_KEY or ANTHROPIC_API_KEY"):
        build(settings.route("coach"), settings)


def test_errors_from_the_server_never_echo_a_key(server):
    server.queue(error("openai", 400, "bad request for key sk-proj-abcdefghijklmnopqrstuvwx1234"))
    with pytest.raises(ProviderError) as caught:
        ask(provider_for("openai", server))
    assert "abcdefghijklmnop" not in str(caught.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_key_echoed_by_the_server_is_cut_from_the_error(kind, server):
    server.queue(error(kind, 500, "upstream said: bad key hunter2-local-secret"))
    with pytest.raises(ProviderError) as caught:
        ask(
            provider_for(
                kind, server, LESSONLOOP_API_KEY="hunter2-local-secret", LESSONLOOP_MAX_RETRIES="0"
            )
        )
    assert "hunter2" not in str(caught.value) and "[REDACTED:api-key]" in str(caught.value)


def test_offline_mode_ignores_proxy_settings_that_would_leave_the_machine(server, monkeypatch):
    with FakeServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
        monkeypatch.setenv("http_proxy", proxy.base_url)
        server.queue(success("openai", "direct"))
        completion = ask(provider_for("openai", server, LESSONLOOP_OFFLINE="1"))
        assert completion.text == "direct" and proxy.received == []


def test_the_price_of_a_dated_snapshot_is_its_models(server):
    server.queue(
        Reply(
            body=openai_completion(
                model="gpt-4o-mini-2024-07-18", prompt_tokens=1000, completion_tokens=1000
            )
        )
    )
    completion = ask(provider_for("openai", server, LESSONLOOP_MODEL="gpt-4o-mini"))
    assert completion.cost == pytest.approx((1000 * 0.15 + 1000 * 0.6) / 1e6)


def test_routes_follow_the_documented_precedence():
    env = {
        "LESSONLOOP_COACH_PROVIDER": "openai",
        "LESSONLOOP_MODEL": "m-global",
        "LESSONLOOP_BASE_URL": "http://127.0.0.1:1234/v1",
    }
    coach = config.load(environ=env).route("coach")
    assert (coach.provider, coach.model, coach.base_url) == (
        "openai",
        "m-global",
        "http://127.0.0.1:1234/v1",
    )
    mixed = config.load(environ={**env, "LESSONLOOP_PROVIDER": "ollama"})
    assert mixed.route("coach").model is None, "the global model belongs to the global provider"
    assert mixed.route("analyst").model == "m-global"
    flagged = config.load(flags={"PROVIDER": "anthropic:claude-x"}, environ=env)
    assert flagged.route("coach") == config.Route("anthropic", "claude-x", "http://127.0.0.1:1234")
    v1 = config.load(
        environ={
            "LESSONLOOP_PROVIDER": "anthropic",
            "LESSONLOOP_BASE_URL": "http://127.0.0.1:9/v1/",
        }
    )
    assert v1.route("judge").base_url == "http://127.0.0.1:9"
    with pytest.raises(UsageError, match="not an http"):
        config.load(
            environ={"LESSONLOOP_PROVIDER": "openai", "LESSONLOOP_BASE_URL": "http://[::1/v1"}
        ).route("judge")


def test_without_a_base_url_setting_a_route_follows_its_providers_own_variable():
    gateways = {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:7/v1",
        "OPENAI_BASE_URL": "http://127.0.0.1:8/v1",
        "OLLAMA_HOST": "127.0.0.1:9",
    }
    for provider, url in (
        ("anthropic", "http://127.0.0.1:7"),
        ("openai", "http://127.0.0.1:8/v1"),
        ("ollama", "http://127.0.0.1:9/v1"),
        ("vllm", "http://localhost:8000/v1"),
    ):
        settings = config.load(environ={"LESSONLOOP_PROVIDER": provider, **gateways})
        assert settings.route("competitor").base_url == url, provider
        ours = config.load(
            environ={
                "LESSONLOOP_PROVIDER": provider,
                **gateways,
                "LESSONLOOP_BASE_URL": "http://127.0.0.1:6/v1",
            }
        )
        assert "127.0.0.1:6" in ours.route("competitor").base_url, "lessonloop's own setting wins"
    with pytest.raises(UsageError, match="not an http"):
        config.load(
            environ={"LESSONLOOP_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": "gateway:7"}
        ).route("judge")


def test_timeouts_per_role_and_a_default_that_fits_the_endpoint(tmp_path):
    """A role's own timeout beats the global one; unset, a loopback endpoint (a model on a
    CPU may read a prompt for a minute) gets 600 s and a remote one 60 s."""
    local = config.Route("llamacpp", "m", "http://127.0.0.1:8080/v1")
    remote = config.Route("openai", "m", "https://api.openai.com/v1")
    settings = config.load(environ={}, root=tmp_path)
    assert settings.timeout("coach", local) == config.LOOPBACK_TIMEOUT == 600
    assert settings.timeout("coach", remote) == config.REMOTE_TIMEOUT == 60
    (tmp_path / "config.toml").write_text("timeout = 90\n[roles.coach]\ntimeout = 300\n")
    settings = config.load(environ={"LESSONLOOP_JUDGE_TIMEOUT": "45"}, root=tmp_path)
    assert settings.timeout("coach", remote) == 300
    assert settings.timeout("analyst", local) == 90
    assert settings.timeout("judge", local) == 45
    with pytest.raises(UsageError, match="LESSONLOOP_JUDGE_TIMEOUT"):
        config.load(environ={"LESSONLOOP_JUDGE_TIMEOUT": "soon"}, root=tmp_path).timeout("judge")


def test_the_presets_for_local_servers_reach_their_default_ports():
    settings = config.load(
        environ={
            "LESSONLOOP_PROVIDER": "llamacpp",
            "LESSONLOOP_MODEL": "q",
            "LESSONLOOP_COACH_PROVIDER": "lmstudio",
            "LESSONLOOP_COACH_MODEL": "q",
        }
    )
    assert settings.route("competitor").base_url == "http://127.0.0.1:8080/v1"
    assert settings.route("coach").base_url == "http://127.0.0.1:1234/v1"
    assert build(settings.route("coach"), settings).name == "lmstudio"


def test_an_answer_whose_repair_fails_is_still_counted(server):
    """The first answer was given (and may be paid for): a repair that times out carries it."""
    server.queue(
        success("openai", '{"answer": "many"}'),
        Reply(body=openai_completion(), delay=2.0),
        Reply(body={}, delay=2.0),
    )
    provider = provider_for("openai", server, LESSONLOOP_TIMEOUT="0.3", LESSONLOOP_MAX_RETRIES="0")
    with pytest.raises(ProviderError, match="timed out") as caught:
        ask(provider, json_schema=SCHEMA)
    assert caught.value.completion is not None and caught.value.completion.calls == 1
    assert caught.value.completion.text == '{"answer": "many"}'
