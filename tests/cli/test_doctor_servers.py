"""``doctor`` against model servers: which models they serve, their context window, and whether
each role's timeout fits the largest call (fake servers of each make, and one real model)."""

from __future__ import annotations

import pytest

from lessonloop.loop.context import TOKEN_BUDGET
from lessonloop.providers.probe import LARGEST_ANSWER, PROBE_ANSWER

from ..providers.fake_servers import FakeServer, Received, Reply, openai_completion

NEEDED = TOKEN_BUDGET + LARGEST_ANSWER
SECRET = "sk-doctor-probe-secret-0123456789"


class ModelHost(FakeServer):
    """A model server of some make: the models it lists (``None``: no /v1/models), what it says
    at its own routes (path -> JSON body, GET or POST), and how it answers a completion."""

    def __init__(
        self,
        models=("served-model",),
        routes: dict | None = None,
        usage: dict | None = None,
        timings: dict | None = None,
        delay: float = 0.0,
    ):
        self.models = (
            None
            if models is None
            else [
                m if isinstance(m, dict) else {"id": m, "object": "model", "owned_by": "test"}
                for m in models
            ]
        )
        self.routes = routes or {}
        self.usage, self.timings, self.delay = usage, timings, delay
        super().__init__(responder=self._answer)

    def _answer(self, received: Received) -> Reply:
        body = openai_completion(
            "1 2 3 4",
            model=(received.body or {}).get("model", "?"),
            prompt_tokens=60,
            completion_tokens=PROBE_ANSWER,
        )
        if self.usage is not None:
            body["usage"] = self.usage
        if self.timings is not None:
            body["timings"] = self.timings
        return Reply(body=body, delay=self.delay)

    def _reply_for(self, received: Received) -> Reply:
        path = received.path.rstrip("/")
        if path in ("/v1/models", "/models") and received.method == "GET":
            if self.models is None:
                return Reply(
                    404, {"error": {"message": "not found", "type": "invalid_request_error"}}
                )
            return Reply(body={"object": "list", "data": self.models})
        if path in self.routes:
            return Reply(body=self.routes[path])
        return super()._reply_for(received)

    @property
    def completions(self) -> list[Received]:
        return [r for r in self.received if r.path.endswith("/chat/completions")]


def route_to(
    monkeypatch, server: ModelHost, model: str = "served-model", provider: str = "openai"
) -> None:
    monkeypatch.setenv("LESSONLOOP_PROVIDER", provider)
    monkeypatch.setenv("LESSONLOOP_MODEL", model)
    monkeypatch.setenv("LESSONLOOP_BASE_URL", server.base_url + "/v1")
    monkeypatch.setenv("LESSONLOOP_API_KEY", SECRET)


def doctor(cli, *args: str):
    """Run ``doctor --json``: the exit code and the one endpoint's report."""
    result = cli("doctor", "--json", *args)
    assert SECRET not in result.out + result.err, "a key is never printed"
    endpoints = result.json()["endpoints"]
    assert len(endpoints) == 1
    return result.code, endpoints[0]


FAST = {
    "prompt_n": 60,
    "prompt_ms": 60.0,
    "prompt_per_second": 1000.0,
    "predicted_n": 8,
    "predicted_ms": 80.0,
    "predicted_per_second": 100.0,
}


# 1. which models the endpoint serves ---------------------------------------------------------


def test_a_model_the_server_does_not_serve_is_flagged_naming_the_served_ones(cli, monkeypatch):
    with ModelHost(models=["qwen-a", "qwen-b"]) as server:
        route_to(monkeypatch, server, model="qwen-c")
        code, endpoint = doctor(cli)
        text = cli("doctor")
        probes = server.completions
    assert code == 1 and text.code == 1
    assert endpoint["ok"] is False and endpoint["model_served"] is False
    assert endpoint["models"] == ["qwen-a", "qwen-b"] and endpoint["models_source"] == "/v1/models"
    assert endpoint["detail"] == "model 'qwen-c' is not served; /v1/models lists: qwen-a, qwen-b"
    assert "FAIL openai" in text.out and "'qwen-c' is not served" in text.out
    assert probes == [], "no completion is sent for a model the server does not serve"


def test_a_served_model_on_a_llamacpp_preset_is_ok_with_its_context_and_speed(cli, monkeypatch):
    props = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}
    with ModelHost(models=["qwen"], routes={"/props": props}, timings=FAST) as server:
        monkeypatch.setenv("LESSONLOOP_BASE_URL", server.base_url + "/v1")
        code, endpoint = doctor(cli, "--provider", "llamacpp", "--model", "qwen")
        probe = server.completions
    assert code == 0, endpoint
    assert endpoint["provider"] == "llamacpp" and endpoint["ok"] and endpoint["problems"] == []
    assert endpoint["model_served"] is True and endpoint["detail"].startswith(
        "answers; serves 'qwen'"
    )
    context = endpoint["context"]
    assert (context["tokens"], context["ok"], context["needed"]) == (8192, True, NEEDED)
    assert context["source"] == "/props default_generation_settings.n_ctx"
    latency = endpoint["latency"]
    assert latency["measured"] and latency["ok"] and latency["too_short"] == []
    assert latency["basis"] == "measured by the server's own timings"
    assert latency["prompt_tokens_per_second"] == 1000.0
    assert latency["estimated_seconds"] == pytest.approx(
        TOKEN_BUDGET / 1000 + LARGEST_ANSWER / 100, abs=0.1
    )
    assert set(latency["timeouts"]) == {
        "competitor",
        "translator",
        "analyst",
        "coach",
        "curator",
        "judge",
    }
    # one tiny completion, no key sent to a local preset
    assert len(probe) == 1 and probe[0].body["max_tokens"] == PROBE_ANSWER
    assert len(probe[0].text) < 400
    assert (
        "authorization" not in probe[0].headers or SECRET not in probe[0].headers["authorization"]
    )


def test_an_ollama_name_without_a_tag_is_served_as_latest_from_api_tags(cli, monkeypatch):
    tags = {"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest"}]}
    show = {
        "parameters": 'num_ctx 8192\nstop "<|eot_id|>"',
        "model_info": {"llama.context_length": 131072},
    }
    with ModelHost(
        models=None, routes={"/api/tags": tags, "/api/show": show}, timings=FAST
    ) as server:
        route_to(monkeypatch, server, model="llama3.2", provider="ollama")
        code, endpoint = doctor(cli)
    assert code == 0, endpoint
    assert endpoint["models"] == ["llama3.2:latest"] and endpoint["models_source"] == "/api/tags"
    assert endpoint["model_served"] is True
    assert endpoint["context"]["tokens"] == 8192
    assert endpoint["context"]["source"] == "/api/show parameters num_ctx"
    assert endpoint["context"]["model_max"] == 131072


def test_an_endpoint_without_a_model_list_is_not_a_failure(cli, monkeypatch):
    with ModelHost(models=None, timings=FAST) as server:
        route_to(monkeypatch, server)
        code, endpoint = doctor(cli)
    assert code == 0, endpoint
    assert endpoint["ok"] and endpoint["models"] is None and endpoint["model_served"] is None
    assert "cannot tell whether it serves 'served-model'" in endpoint["detail"]


# 2. timeouts against the measured latency ----------------------------------------------------


def test_a_timeout_too_short_for_the_servers_timings_is_flagged(cli, monkeypatch):
    cpu = {
        "prompt_n": 60,
        "prompt_ms": 1500.0,
        "prompt_per_second": 40.0,
        "predicted_n": 8,
        "predicted_ms": 800.0,
        "predicted_per_second": 10.0,
    }
    with ModelHost(timings=cpu) as server:
        route_to(monkeypatch, server)
        monkeypatch.setenv("LESSONLOOP_COMPETITOR_TIMEOUT", "60")
        code, endpoint = doctor(cli)
        text = cli("doctor")
    expected = TOKEN_BUDGET / 40 + LARGEST_ANSWER / 10  # 190 s
    latency = endpoint["latency"]
    assert code == 1 and endpoint["ok"] is False
    assert latency["ok"] is False and latency["too_short"] == ["competitor"]
    assert latency["estimated_seconds"] == pytest.approx(expected)
    assert latency["timeouts"]["competitor"] == 60 and latency["timeouts"]["coach"] == 600
    assert latency["detail"].startswith("timeout too short: the largest call")
    assert (
        "more than the timeout (60 s for competitor); raise LESSONLOOP_COMPETITOR_TIMEOUT"
        in latency["detail"]
    )
    assert "LESSONLOOP_COMPETITOR_TIMEOUT" in latency["detail"]
    assert latency["detail"] in endpoint["problems"]
    assert "latency: FAIL timeout too short" in text.out


def test_without_timings_the_speed_is_measured_from_usage_and_wall_time(cli, monkeypatch):
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 8,
        "total_tokens": 108,
        "prompt_tokens_details": {"cached_tokens": 20},
    }
    with ModelHost(usage=usage, delay=0.5) as server:
        route_to(monkeypatch, server)
        monkeypatch.setenv("LESSONLOOP_TIMEOUT", "10")
        code, endpoint = doctor(cli)
    latency = endpoint["latency"]
    assert latency["probe"]["cached_tokens"] == 20 and latency["probe"]["seconds"] >= 0.5
    assert latency["basis"].startswith("measured from 80 prompt and 8 answer tokens")
    # 80 read + 4 x 8 written in >= 0.5 s: at most 224 tok/s read, 56 written
    assert latency["prompt_tokens_per_second"] <= 224.0
    assert latency["estimated_seconds"] > 10
    assert code == 1 and len(latency["too_short"]) == 6
    assert "raise LESSONLOOP_TIMEOUT;" in latency["detail"]
    assert len(latency["samples_seconds"]) == 2, "a wall-time flag is checked once more"


def test_a_wait_in_the_servers_queue_is_not_scaled_into_a_false_flag(cli, monkeypatch):
    usage = {"prompt_tokens": 100, "completion_tokens": 8, "total_tokens": 108}
    with ModelHost(usage=usage) as server:
        queued = openai_completion("1 2 3", prompt_tokens=100, completion_tokens=8)
        server.queue(Reply(body=queued, delay=1.0))  # the first probe waits behind someone
        route_to(monkeypatch, server)
        monkeypatch.setenv("LESSONLOOP_TIMEOUT", "30")
        code, endpoint = doctor(cli)
        probes = len(server.completions)
    latency = endpoint["latency"]
    assert probes == 2 and latency["samples_seconds"][0] >= 1.0
    assert latency["probe"]["seconds"] < 1.0 and latency["estimated_seconds"] < 30
    assert code == 0 and latency["ok"] is True


def test_a_probe_cut_short_by_doctors_own_limit_is_not_measured_rather_than_failed(
    cli, monkeypatch
):
    monkeypatch.setattr("lessonloop.providers.probe.PROBE_TIMEOUT_CAP", 0.3)
    with ModelHost(delay=2) as server:
        route_to(monkeypatch, server)
        code, endpoint = doctor(cli)
    latency = endpoint["latency"]
    assert code == 0 and latency["ok"] is None and latency["measured"] is False
    assert latency["detail"].endswith(
        "did not finish within 0.3 s (the server is busy or very slow); not measured"
    )


def test_a_speed_the_answer_cannot_time_is_assumed_and_neither_passes_nor_fails(cli, monkeypatch):
    usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    with ModelHost(usage=usage) as server:
        route_to(monkeypatch, server)
        monkeypatch.setenv("LESSONLOOP_TIMEOUT", "10")
        code, endpoint = doctor(cli)
    latency = endpoint["latency"]
    assert latency["measured"] and latency["basis"].startswith("assumed")
    assert latency["ok"] is None and "may be too short" in latency["detail"]
    assert code == 0


def test_the_latency_probe_is_skipped_when_asked_and_on_a_hosted_endpoint(cli, monkeypatch):
    with ModelHost(timings=FAST) as server:
        route_to(monkeypatch, server)
        code, endpoint = doctor(cli, "--no-latency")
        assert server.completions == []
        assert code == 0 and endpoint["latency"]["measured"] is False
        assert endpoint["latency"]["detail"] == "not measured (--no-latency)"
        # a hosted API may charge for a completion: not measured unless asked
        monkeypatch.setattr("lessonloop.providers.hosted.is_loopback", lambda url: False)
        code, endpoint = doctor(cli)
        assert server.completions == [] and endpoint["latency"]["measured"] is False
        assert "not a loopback endpoint" in endpoint["latency"]["detail"]
        code, endpoint = doctor(cli, "--latency")
        assert len(server.completions) == 1 and endpoint["latency"]["measured"] is True


def test_a_probe_that_times_out_is_flagged(cli, monkeypatch):
    with ModelHost(delay=3) as server:
        route_to(monkeypatch, server)
        monkeypatch.setenv("LESSONLOOP_TIMEOUT", "0.5")
        code, endpoint = doctor(cli)
    assert code == 1
    assert (
        endpoint["latency"]["detail"]
        == f"a {PROBE_ANSWER}-token completion did not finish within 0.5 s"
    )


# 3. the context window ------------------------------------------------------------------------

SMALL = [
    (
        "vllm",
        {"models": [{"id": "served-model", "object": "model", "max_model_len": 4096}]},
        "/v1/models max_model_len",
    ),
    (
        "llamacpp",
        {"routes": {"/props": {"default_generation_settings": {"n_ctx": 4096}}}},
        "/props default_generation_settings.n_ctx",
    ),
    (
        "ollama",
        {
            "routes": {
                "/api/ps": {"models": [{"name": "served-model:latest", "context_length": 4096}]},
                "/api/show": {"parameters": "", "model_info": {"qwen2.context_length": 32768}},
            }
        },
        "/api/ps context_length (the loaded model)",
    ),
    (
        "lmstudio",
        {
            "routes": {
                "/api/v0/models": {
                    "data": [
                        {
                            "id": "served-model",
                            "state": "loaded",
                            "loaded_context_length": 4096,
                            "max_context_length": 32768,
                        }
                    ]
                }
            }
        },
        "/api/v0/models loaded_context_length",
    ),
    (
        "openai",
        {"routes": {"/props": {"default_generation_settings": {"n_ctx": 4096}}}},
        "/props default_generation_settings.n_ctx",
    ),  # a loopback server of unknown make
]


@pytest.mark.parametrize("provider,make,source", SMALL, ids=[s[0] for s in SMALL])
def test_a_context_window_smaller_than_the_largest_call_is_flagged(
    provider, make, source, cli, monkeypatch
):
    with ModelHost(timings=FAST, **make) as server:
        route_to(monkeypatch, server, provider=provider)
        code, endpoint = doctor(cli)
    context = endpoint["context"]
    assert code == 1 and endpoint["ok"] is False
    assert (context["tokens"], context["source"], context["ok"]) == (4096, source, False)
    assert context["detail"].startswith(
        f"context window 4096 tokens ({source}) is smaller than the largest call lessonloop makes"
    )
    assert f"= {NEEDED} tokens" in context["detail"] and context["detail"] in endpoint["problems"]


def test_a_model_whose_own_maximum_is_too_small_is_flagged(cli, monkeypatch):
    entry = {"id": "served-model", "object": "model", "meta": {"n_ctx_train": 2048}}
    with ModelHost(models=[entry], timings=FAST) as server:
        route_to(monkeypatch, server, provider="llamacpp")
        code, endpoint = doctor(cli)
    assert code == 1 and endpoint["context"]["ok"] is False
    assert endpoint["context"]["detail"].startswith("the model handles at most 2048 tokens")


def test_an_unknown_context_window_is_reported_as_unknown_not_ok(cli, monkeypatch):
    # the local-model kit's server: /v1/models and /health only
    with ModelHost(timings=FAST, routes={"/health": {"status": "ok"}}) as server:
        route_to(monkeypatch, server)
        code, endpoint = doctor(cli)
        asked = {r.path for r in server.received}
        text = cli("doctor")
    context = endpoint["context"]
    assert code == 0 and endpoint["ok"] is True
    assert context["tokens"] is None and context["ok"] is None and context["needed"] == NEEDED
    assert context["detail"].startswith("context window unknown")
    assert "context: ? context window unknown" in text.out
    assert {"/props", "/api/ps", "/api/v0/models"} <= asked  # it looked where servers say


def test_a_models_maximum_alone_leaves_the_window_unknown(cli, monkeypatch):
    entry = {"id": "served-model", "object": "model", "meta": {"n_ctx_train": 32768}}
    with ModelHost(models=[entry], timings=FAST) as server:
        route_to(monkeypatch, server, provider="llamacpp")
        code, endpoint = doctor(cli)
    context = endpoint["context"]
    assert code == 0 and context["ok"] is None and context["tokens"] is None
    assert context["model_max"] == 32768 and "may run a smaller window" in context["detail"]


# the real model --------------------------------------------------------------------------------


@pytest.mark.real_model
def test_doctor_against_a_real_model_server(real_model, cli, monkeypatch):
    for name, value in real_model.env().items():
        monkeypatch.setenv(name, value)
    result = cli("doctor", "--json")
    report = result.json()
    [endpoint] = report["endpoints"]
    assert endpoint["model_served"] is True and real_model.model in endpoint["models"]
    latency = endpoint["latency"]
    assert latency["measured"] is True, latency
    assert latency["prompt_tokens_per_second"] > 0 and latency["estimated_seconds"] > 0
    assert latency["probe"]["completion_tokens"] <= PROBE_ANSWER
    if endpoint["context"]["tokens"] is None:
        assert endpoint["context"]["ok"] is None  # unknown, never ok by assumption
    assert result.code == (0 if report["ok"] else 1)

    monkeypatch.setenv("LESSONLOOP_MODEL", "no-such-model-here")
    result = cli("doctor", "--json")
    [endpoint] = result.json()["endpoints"]
    assert result.code == 1
    assert endpoint["ok"] is False and endpoint["model_served"] is False
    assert endpoint["detail"].startswith("model 'no-such-model-here' is not served")
    assert real_model.model in endpoint["detail"]
    assert endpoint["latency"]["measured"] is False
