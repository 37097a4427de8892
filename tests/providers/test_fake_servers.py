"""The fake provider servers speak the real wire formats: proven by driving the real SDKs at them.

Facts pinned here were found by experiment against anthropic 2.14 / openai 3.57 (both on httpx2):

* anthropic 2.14 sends ``api_key`` as ``Authorization: Bearer <key>`` -- not ``x-api-key`` --
  plus ``anthropic-version``; openai sends ``Authorization: Bearer <key>``.
* A 200 whose body is not JSON but claims ``application/json`` raises the stdlib
  ``json.JSONDecodeError`` (a ``ValueError``) from both SDKs, NOT the SDK's ``APIError``.
* A 200 with a non-JSON Content-Type does not raise at all: ``create()`` returns the raw ``str``.
* A client timeout raises ``APITimeoutError`` (a subclass of ``APIConnectionError``/``APIError``).
"""

from __future__ import annotations

import http.client
import json
import threading
import time

import anthropic
import openai
import pytest

from tests.providers.fake_servers import (
    FakeServer,
    Received,
    Reply,
    anthropic_error,
    anthropic_message,
    openai_completion,
    openai_error,
)

KEY = "test-key"
USER = [{"role": "user", "content": "hello there"}]


@pytest.fixture
def server():
    with FakeServer() as fake:
        yield fake


# Building an SDK client loads the system CA bundle (~35 ms); build one per module and
# point a cheap copy (which shares the connection pool) at each test's server.
@pytest.fixture(scope="module")
def claude_base():
    with anthropic.Anthropic(base_url="http://127.0.0.1:9", api_key=KEY, max_retries=0) as client:
        yield client


@pytest.fixture(scope="module")
def gpt_base():
    with openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key=KEY, max_retries=0) as client:
        yield client


@pytest.fixture
def claude(server, claude_base):
    return claude_base.with_options(base_url=server.base_url)


@pytest.fixture
def gpt(server, gpt_base):
    return gpt_base.with_options(base_url=server.base_url + "/v1")


def ask_claude(client, **kwargs):
    return client.messages.create(model="claude-test", max_tokens=64, messages=USER, **kwargs)


def ask_gpt(client, **kwargs):
    return client.chat.completions.create(model="gpt-test", messages=USER, **kwargs)


def raw_request(server, method, path, body=None, headers=None):
    host, port = server.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


# --------------------------------------------------------------------------- success paths


def test_anthropic_text_reply_and_request_shape(server, claude):
    server.queue(Reply(body=anthropic_message("bonjour", input_tokens=21, output_tokens=4)))

    message = claude.messages.create(
        model="claude-test", max_tokens=64, system="be brief", messages=USER
    )

    assert isinstance(message, anthropic.types.Message)
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == "bonjour"
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (21, 4)

    [request] = server.received
    assert (request.method, request.path) == ("POST", "/v1/messages")
    # anthropic 2.14 authenticates api_key with a Bearer header, not x-api-key.
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert "x-api-key" not in request.headers
    assert request.headers["anthropic-version"]
    assert request.headers["content-type"] == "application/json"
    assert request.body["model"] == "claude-test"
    assert request.body["max_tokens"] == 64
    assert request.body["messages"] == USER
    assert request.body["system"] == "be brief"


def test_anthropic_tool_use_reply(server, claude):
    server.queue(Reply(body=anthropic_message(tool_input={"rate": 1.5, "mode": "a"})))

    message = ask_claude(claude)

    assert message.stop_reason == "tool_use"
    [block] = message.content
    assert isinstance(block, anthropic.types.ToolUseBlock)
    assert block.name == "respond"
    assert block.id.startswith("toolu_")
    assert block.input == {"rate": 1.5, "mode": "a"}


def test_openai_text_reply_and_request_shape(server, gpt):
    server.queue(Reply(body=openai_completion("hola", prompt_tokens=30, completion_tokens=2)))

    completion = gpt.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "system", "content": "be brief"}, *USER],
    )

    assert completion.choices[0].message.content == "hola"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.prompt_tokens == 30
    assert completion.usage.completion_tokens == 2
    assert completion.usage.total_tokens == 32

    [request] = server.received
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "gpt-test"
    assert request.body["messages"][1:] == USER


def test_openai_base_url_without_v1_is_accepted(server):
    with openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0) as client:
        completion = ask_gpt(client)
    assert completion.choices[0].message.content == "ok"
    assert server.received[-1].path == "/chat/completions"


def test_models_list_in_both_formats_ignores_the_queue(server, claude, gpt):
    server.queue(Reply(body=anthropic_message("still queued")))

    claude_models = list(claude.models.list())
    gpt_models = list(gpt.models.list())

    assert [m.id for m in claude_models] == ["claude-test"]
    assert claude_models[0].display_name == "Claude Test"
    assert [m.id for m in gpt_models] == ["gpt-test"]
    assert gpt_models[0].owned_by == "test"
    assert [(r.method, r.path) for r in server.received] == [("GET", "/v1/models")] * 2
    assert server.pending == 1
    assert ask_claude(claude).content[0].text == "still queued"


def test_received_text_joins_system_and_every_message(server, claude, gpt):
    claude.messages.create(
        model="claude-test",
        max_tokens=8,
        system=[{"type": "text", "text": "SYSTEM-A"}],
        messages=[
            {"role": "user", "content": "USER-A"},
            {"role": "assistant", "content": [{"type": "text", "text": "ASSISTANT-A"}]},
            {"role": "user", "content": [{"type": "text", "text": "USER-B"}]},
        ],
    )
    gpt.chat.completions.create(
        model="gpt-test",
        messages=[
            {"role": "system", "content": "SYSTEM-O"},
            {"role": "user", "content": [{"type": "text", "text": "USER-O"}]},
        ],
    )

    claude_text, gpt_text = (r.text for r in server.received)
    for needle in ("SYSTEM-A", "USER-A", "ASSISTANT-A", "USER-B"):
        assert needle in claude_text
    assert "SYSTEM-O" in gpt_text and "USER-O" in gpt_text
    assert Received("GET", "/v1/models", {}, None).text == ""


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "claude_error", "gpt_error"),
    [
        (401, anthropic.AuthenticationError, openai.AuthenticationError),
        (500, anthropic.InternalServerError, openai.InternalServerError),
        (529, anthropic.OverloadedError, openai.InternalServerError),
    ],
)
def test_status_errors_map_to_sdk_classes(server, claude, gpt, status, claude_error, gpt_error):
    server.queue(anthropic_error(status, "claude says no"), openai_error(status, "gpt says no"))

    with pytest.raises(claude_error) as claude_exc:
        ask_claude(claude)
    with pytest.raises(gpt_error) as gpt_exc:
        ask_gpt(gpt)

    assert claude_exc.value.status_code == gpt_exc.value.status_code == status
    assert claude_exc.value.api_message == "claude says no"
    assert "gpt says no" in gpt_exc.value.message
    assert len(server.received) == 2  # max_retries=0: exactly one attempt each


def test_rate_limit_exposes_retry_after(server, claude, gpt):
    server.queue(
        anthropic_error(429, "slow down", headers={"Retry-After": "7"}),
        openai_error(429, "slow down", headers={"Retry-After": "9"}),
    )

    with pytest.raises(anthropic.RateLimitError) as claude_exc:
        ask_claude(claude)
    with pytest.raises(openai.RateLimitError) as gpt_exc:
        ask_gpt(gpt)

    assert claude_exc.value.response.headers["retry-after"] == "7"
    assert claude_exc.value.type == "rate_limit_error"
    assert gpt_exc.value.response.headers["retry-after"] == "9"
    assert gpt_exc.value.code == "rate_limit_exceeded"


def test_malformed_json_body_raises_json_decode_error_not_api_error(server, claude, gpt):
    server.queue(Reply(body="{not json"), Reply(body=b"\x00\xff garbage"))

    with pytest.raises(json.JSONDecodeError) as claude_exc:
        ask_claude(claude)
    with pytest.raises(json.JSONDecodeError) as gpt_exc:
        ask_gpt(gpt)

    assert isinstance(claude_exc.value, ValueError)
    assert not isinstance(claude_exc.value, anthropic.APIError)
    assert not isinstance(gpt_exc.value, openai.APIError)


def test_non_json_content_type_comes_back_as_a_plain_string(server, claude, gpt):
    html = {"Content-Type": "text/html"}
    server.queue(
        Reply(body="<html>oops</html>", headers=html), Reply(body="<html>oops</html>", headers=html)
    )

    assert ask_claude(claude) == "<html>oops</html>"
    assert ask_gpt(gpt) == "<html>oops</html>"


def test_timeout_raises_api_timeout_error_and_server_survives(server, claude, gpt):
    server.queue(
        Reply(body=anthropic_message("too late"), delay=2.0),
        Reply(body=openai_completion("too late"), delay=2.0),
    )

    started = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError) as claude_exc:
        ask_claude(claude, timeout=0.3)
    with pytest.raises(openai.APITimeoutError) as gpt_exc:
        ask_gpt(gpt, timeout=0.3)
    assert time.monotonic() - started < 1.5

    assert isinstance(claude_exc.value, anthropic.APIConnectionError)
    assert isinstance(gpt_exc.value, openai.APIConnectionError)
    assert ask_claude(claude).content[0].text == "ok"
    assert ask_gpt(gpt).choices[0].message.content == "ok"


def test_client_that_gives_up_does_not_crash_or_print(server, claude, capfd):
    server.queue(Reply(body=anthropic_message("late"), delay=0.2))

    with pytest.raises(anthropic.APITimeoutError):
        ask_claude(claude, timeout=0.05)
    time.sleep(0.25)  # let the handler wake up and write into the abandoned socket

    assert ask_claude(claude).content[0].text == "ok"
    assert server.errors == []
    assert capfd.readouterr().err == ""


def test_sdk_retries_consume_queued_replies(server):
    server.queue(anthropic_error(500, "flaky", headers={"retry-after-ms": "10"}))
    with anthropic.Anthropic(base_url=server.base_url, api_key=KEY, max_retries=1) as client:
        message = ask_claude(client)

    assert message.content[0].text == "ok"
    assert [r.headers["x-stainless-retry-count"] for r in server.received] == ["0", "1"]


# --------------------------------------------------------------------------- server behaviour


def test_queue_is_fifo_then_responder():
    seen: list[Received] = []

    def responder(received: Received) -> Reply:
        seen.append(received)
        return Reply(body=anthropic_message(f"echo:{received.body['messages'][-1]['content']}"))

    with FakeServer(responder) as fake:
        with anthropic.Anthropic(base_url=fake.base_url, api_key=KEY, max_retries=0) as client:
            fake.queue(
                Reply(body=anthropic_message("first")), Reply(body=anthropic_message("second"))
            )
            texts = [ask_claude(client).content[0].text for _ in range(3)]

    assert texts == ["first", "second", "echo:hello there"]
    assert seen == [fake.received[2]]


def test_responder_exception_becomes_a_500_and_is_recorded():
    def broken(received: Received) -> Reply:
        raise RuntimeError("responder bug")

    with FakeServer(broken) as fake:
        with anthropic.Anthropic(base_url=fake.base_url, api_key=KEY, max_retries=0) as client:
            with pytest.raises(anthropic.InternalServerError, match="responder bug"):
                ask_claude(client)

    assert [type(e) for e in fake.errors] == [RuntimeError]


def test_raw_http_headers_unknown_paths_and_bad_request_bodies(server):
    status, headers, payload = raw_request(
        server, "POST", "/v1/messages", body=b"not json", headers={"X-Api-Key": "k"}
    )
    assert status == 200
    assert headers["Content-Type"] == "application/json"
    assert int(headers["Content-Length"]) == len(payload)
    assert json.loads(payload)["type"] == "message"
    assert server.received[-1].body is None
    assert server.received[-1].headers["x-api-key"] == "k"

    status, headers, payload = raw_request(server, "GET", "/v2/whatever?x=1")
    assert status == 404
    assert headers["Content-Type"] == "application/json"
    assert json.loads(payload)["error"]["type"] == "not_found_error"
    assert (server.received[-1].path, server.received[-1].query) == ("/v2/whatever", "x=1")

    status, _, payload = raw_request(server, "GET", "/models")
    assert status == 200 and json.loads(payload)["object"] == "list"


def test_concurrent_requests_each_get_one_queued_reply(server, gpt):
    server.queue(*(Reply(body=openai_completion(f"r{i}"), delay=0.05) for i in range(8)))
    answers: list[str] = []
    lock = threading.Lock()

    def call() -> None:
        text = ask_gpt(gpt).choices[0].message.content
        with lock:
            answers.append(text)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)

    assert sorted(answers) == sorted(f"r{i}" for i in range(8))
    assert len(server.received) == 8 and server.pending == 0


def test_exit_is_prompt_with_idle_keepalive_and_pending_delay():
    fake = FakeServer()
    client = anthropic.Anthropic(base_url=fake.base_url, api_key=KEY, max_retries=0)
    ask_claude(client)  # leaves a pooled keep-alive connection open
    fake.queue(Reply(body=anthropic_message(), delay=30))
    caller = threading.Thread(
        target=lambda: pytest.raises(Exception, ask_claude, client), daemon=True
    )
    caller.start()
    while len(fake.received) < 2:
        time.sleep(0.01)

    started = time.monotonic()
    with fake:
        pass
    assert time.monotonic() - started < 1.0
    caller.join(timeout=2)
    client.close()
