"""``doctor``'s look at a model server behind an OpenAI-compatible endpoint: which models it
serves, how large a context it runs with, and whether each role's timeout fits the largest call
lessonloop makes there.

Servers say these things in different places: the model list (``GET /v1/models``, Ollama's
``/api/tags``), the context size (llama.cpp ``/props``, vLLM's ``max_model_len``, Ollama's
``/api/ps`` and ``/api/show``, LM Studio's ``/api/v0/models``), the speed (llama.cpp's
``timings``, else usage and wall time of one tiny completion). What a server does not say is
reported as unknown, never assumed to be fine.

Every request goes through the provider's own SDK client (its key, offline rules and proxy
settings), once, without waiting for a server that is down; errors come back through the
provider's key-scrubbing path, and nothing here returns the key.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

from ..errors import ProviderError
from . import catalog

# The longest answer a loop role asks for (the coach's max_tokens in lessonloop.loop.prompts);
# the largest prompt is the context budget, which the caller gives (providers sit below loop/).
LARGEST_ANSWER = 400
CPU_PROMPT_RATE = 40.0  # prompt tokens/s a CPU server reads: used only when nothing is measured
# Writing a token costs about this many times reading one on a CPU (the local-model kit:
# ~40 prompt tok/s, 8-15 answer tok/s). Used only when the server does not time the two parts.
WRITE_COST = 4.0
PROBE_ANSWER = 8  # tokens the latency probe asks for
LIST_TIMEOUT = 5.0  # seconds for a GET that only reads what a server says about itself
PROBE_TIMEOUT_CAP = 120.0  # a few tokens that take longer than this say enough
MIN_MEASURED_PROMPT = 16  # fewer prompt tokens read (the rest cached) time nothing useful


def _context_setting(kind: str) -> str:
    """How this make of server is given a larger context window (its registration says)."""
    spec = catalog.spec(kind)
    return (spec and spec.context_setting) or "the server context size"


def largest_call(prompt_tokens: int) -> dict:
    return {
        "prompt_tokens": prompt_tokens,
        "answer_tokens": LARGEST_ANSWER,
        "total_tokens": prompt_tokens + LARGEST_ANSWER,
    }


def served(model: str | None, ids: list[str]) -> bool:
    """Whether ``model`` is one of ``ids``; an Ollama name without a tag means ``:latest``."""
    if not model:
        return False
    return model in ids or (":" not in model and f"{model}:latest" in ids)


def _count(value: Any) -> int | None:
    """A positive whole number from a server's JSON, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value > 0 and value == int(value):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
        return int(value)
    return None


def _object(value: Any) -> dict:
    """``value`` when it is a JSON object, else an empty one (a server's field may be absent)."""
    return value if isinstance(value, dict) else {}


def _rate(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 < value < float("inf") else None


def _server_root(base_url: str) -> str:
    """The server's own root: the OpenAI-compatible base URL without its ``/v1``."""
    url = base_url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


class ServerProbe:
    """The checks of one route on an OpenAI-compatible endpoint (an OpenAIProvider)."""

    def __init__(
        self, provider, largest_prompt: int, clock: Callable[[], float] = time.perf_counter
    ):
        self.provider = provider
        self.need = largest_call(largest_prompt)
        self.route = provider.route
        self.kind = self.route.kind
        self.base_url = (self.route.base_url or "").rstrip("/")
        self.root = _server_root(self.base_url)
        self.loopback = bool(getattr(provider, "loopback", False))
        self.clock = clock
        self.entries: list[dict] = []  # the /v1/models entries

    # requests ---------------------------------------------------------------------------
    def _call(self, send: Callable[[], Any]) -> Any:
        """One request, no retries, no waiting for a server that is down."""
        return self.provider.send(send, max_retries=0, wait_for_server=False)[0]

    def _get(self, url: str) -> Any:
        return self._call(
            lambda: self.provider.client.get(url, cast_to=object, options={"timeout": LIST_TIMEOUT})
        )

    def _try_get(self, url: str) -> dict | None:
        """What the server says at ``url``, or None (no such route, not JSON, no answer)."""
        try:
            value = self._get(url)
        except ProviderError:
            return None
        return value if isinstance(value, dict) else None

    def _try_post(self, url: str, body: dict) -> dict | None:
        try:
            value = self._call(
                lambda: self.provider.client.post(
                    url, cast_to=object, body=body, options={"timeout": LIST_TIMEOUT}
                )
            )
        except ProviderError:
            return None
        return value if isinstance(value, dict) else None

    # 1. the model list ------------------------------------------------------------------
    def models(self) -> dict:
        """The models the endpoint serves. A connection failure or a rejected key raises
        ProviderError (the endpoint is unusable); an endpoint without a list is not a
        failure: ``ids`` is None then."""
        ids = source = None
        note = ""
        try:
            page = self._get(f"{self.base_url}/models")
        except ProviderError as exc:
            if exc.status is None or exc.status in (401, 403):
                raise
            page, note = None, f"no model list: {exc.status}"
        data = page.get("data") if isinstance(page, dict) else None
        if isinstance(data, list):
            self.entries = [entry for entry in data if isinstance(entry, dict)]
            ids = [str(entry["id"]) for entry in self.entries if entry.get("id")]
            source = "/v1/models"
        elif page is not None:
            note = "no model list: the answer to /v1/models has no data"
        if not ids and (self.kind == "ollama" or (self.kind == "openai" and self.loopback)):
            tags = self._try_get(f"{self.root}/api/tags")
            names = [
                m.get("name") or m.get("model")
                for m in (tags or {}).get("models") or []
                if isinstance(m, dict)
            ]
            if any(names):
                ids, source, note = [str(n) for n in names if n], "/api/tags", ""
        model = self.route.model
        if not ids:  # no list, or an empty one: nothing to hold the model against
            why = note or ("its model list is empty" if ids == [] else "no model list")
            return {
                "ids": ids,
                "source": source,
                "served": None,
                "detail": f"answers ({why}); cannot tell whether it serves {model!r}",
            }
        is_served = served(model, ids)
        listed = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        if is_served:
            detail = (
                f"answers; serves {model!r} ({len(ids)} model{'s' if len(ids) != 1 else ''} listed)"
            )
        else:
            detail = f"model {model!r} is not served; {source} lists: {listed}"
        return {"ids": ids, "source": source, "served": is_served, "detail": detail}

    # 2. the context window --------------------------------------------------------------
    def _entry(self) -> dict | None:
        model = self.route.model
        for entry in self.entries:
            if served(model, [str(entry.get("id"))]):
                return entry
        return None

    def context(self) -> dict:
        """The context window the server runs the model with (``tokens``) and the model's own
        maximum (``model_max``), where the server says them, against the largest call."""
        found: dict[str, Any] = {
            "tokens": None,
            "source": None,
            "model_max": None,
            "model_max_source": None,
        }

        def runs(tokens: Any, source: str) -> None:
            if found["tokens"] is None and _count(tokens):
                found["tokens"], found["source"] = _count(tokens), source

        def at_most(tokens: Any, source: str) -> None:
            if found["model_max"] is None and _count(tokens):
                found["model_max"], found["model_max_source"] = _count(tokens), source

        entry = self._entry() or {}
        runs(entry.get("max_model_len"), "/v1/models max_model_len")  # vLLM
        meta = _object(entry.get("meta"))
        runs(meta.get("n_ctx"), "/v1/models meta.n_ctx")
        at_most(meta.get("n_ctx_train"), "/v1/models meta.n_ctx_train")  # llama.cpp
        generic = self.kind == "openai" and self.loopback  # a server of unknown make
        if found["tokens"] is None and (self.kind == "llamacpp" or generic):
            self._llamacpp(runs)
        if found["tokens"] is None and (self.kind == "ollama" or generic):
            self._ollama(runs, at_most)
        if found["tokens"] is None and (self.kind == "lmstudio" or generic):
            self._lmstudio(runs, at_most)
        return self._judge_context(found)

    def _llamacpp(self, runs) -> None:
        props = self._try_get(f"{self.root}/props")
        if props is None:
            return
        settings = props.get("default_generation_settings")
        if isinstance(settings, dict):
            runs(settings.get("n_ctx"), "/props default_generation_settings.n_ctx")
        runs(props.get("n_ctx"), "/props n_ctx")

    def _ollama(self, runs, at_most) -> None:
        model = self.route.model
        loaded_models = self._try_get(f"{self.root}/api/ps")
        if loaded_models is None and self.kind != "ollama":
            return  # not Ollama: no /api/show to ask
        for loaded in (loaded_models or {}).get("models") or []:
            if isinstance(loaded, dict) and served(
                model, [str(loaded.get("name") or loaded.get("model"))]
            ):
                runs(loaded.get("context_length"), "/api/ps context_length (the loaded model)")
        show = self._try_post(f"{self.root}/api/show", {"model": model, "name": model})
        if show is None:
            return
        for line in str(show.get("parameters") or "").splitlines():
            words = line.split()
            if len(words) == 2 and words[0] == "num_ctx":
                runs(words[1], "/api/show parameters num_ctx")
        info = show.get("model_info")
        if isinstance(info, dict):
            for key, value in info.items():
                if str(key).endswith(".context_length"):
                    at_most(value, f"/api/show model_info {key}")

    def _lmstudio(self, runs, at_most) -> None:
        model = self.route.model
        listing = self._try_get(f"{self.root}/api/v0/models")
        for entry in (listing or {}).get("data") or []:
            if isinstance(entry, dict) and served(model, [str(entry.get("id"))]):
                runs(entry.get("loaded_context_length"), "/api/v0/models loaded_context_length")
                at_most(entry.get("max_context_length"), "/api/v0/models max_context_length")

    def _judge_context(self, found: dict) -> dict:
        need = self.need
        needed = need["total_tokens"]
        tokens, model_max = found["tokens"], found["model_max"]
        size = (
            f"the largest call lessonloop makes ({need['prompt_tokens']} prompt + "
            f"{need['answer_tokens']} answer = {needed} tokens)"
        )
        if tokens is not None:
            fits = tokens >= needed
            detail = f"context window {tokens} tokens ({found['source']}) " + (
                f"holds {size}"
                if fits
                else f"is smaller than {size}: raise "
                f"{_context_setting(self.kind)} or run "
                "with a smaller --context-budget"
            )
        elif model_max is not None and model_max < needed:
            fits = False
            detail = (
                f"the model handles at most {model_max} tokens ({found['model_max_source']}), "
                f"less than {size}"
            )
        else:
            fits = None
            detail = "context window unknown: the server does not say"
            if model_max is not None:
                detail += (
                    f" what it runs with (the model handles up to {model_max} tokens, "
                    f"{found['model_max_source']}; the server may run a smaller window)"
                )
            if self.kind == "ollama":
                detail += (
                    "; Ollama runs a model with OLLAMA_CONTEXT_LENGTH (2048-4096 by "
                    "default) unless the model sets num_ctx, and says which once it is "
                    "loaded (/api/ps)"
                )
            detail += f"; lessonloop needs {needed}"
        return {**found, "needed": needed, "ok": fits, "detail": detail}

    # 3. the latency probe ---------------------------------------------------------------
    def latency(self, timeouts: dict[str, float]) -> dict:
        """Time one tiny completion, derive how fast the server reads a prompt and writes an
        answer, estimate the largest call and compare it with each role's timeout.

        Wall time includes any wait in the server's queue (a shared server serving one request
        at a time), which scaled up to a large prompt would overstate it: when a wall-time
        estimate exceeds a timeout, one more sample is taken and the faster one kept."""
        need = self.need
        report: dict[str, Any] = {
            "measured": False,
            "timeouts": timeouts,
            "largest_call": {k: need[k] for k in ("prompt_tokens", "answer_tokens")},
        }
        longest = max(timeouts.values())
        wait = min(longest, PROBE_TIMEOUT_CAP)
        samples: list[dict] = []
        for _ in range(2):
            try:
                sample = self._sample(wait)
            except ProviderError as exc:
                if samples:
                    break  # the first sample stands
                timed_out = "timed out" in exc.message
                report["ok"] = False if not timed_out or wait >= longest else None
                report["detail"] = (
                    f"a {PROBE_ANSWER}-token completion failed: {exc.message}"
                    if not timed_out
                    else f"a {PROBE_ANSWER}-token completion did not finish within {wait:g} s"
                    + (
                        ""
                        if report["ok"] is False
                        else " (the server is busy or very slow); not measured"
                    )
                )
                return report
            samples.append(sample)
            if sample["basis"].startswith("measured from") and sample["estimate"] > min(
                timeouts.values()
            ):
                continue  # wall time, and it flags: look once more
            break
        best = min(samples, key=lambda sample: sample["estimate"])
        estimate = best.pop("estimate")
        report["measured"] = True
        report.update(best)
        report["samples_seconds"] = [sample["probe"]["seconds"] for sample in samples]
        report["estimated_seconds"] = round(estimate, 1)
        short = sorted(role for role, limit in timeouts.items() if limit < estimate)
        report["too_short"] = short
        assumed = report["basis"].startswith("assumed")
        report["ok"] = None if assumed else not short  # a guess neither passes nor fails
        speeds = (
            f"the server reads ~{report['prompt_tokens_per_second']:.0f} prompt tok/s and "
            f"writes ~{report['answer_tokens_per_second']:.0f} tok/s, {report['basis']}"
        )
        largest = (
            f"the largest call ({need['prompt_tokens']} prompt + {need['answer_tokens']} "
            f"answer tokens) should take ~{estimate:.0f} s"
        )
        if short:
            limits = "; ".join(
                f"{limit:g} s for {', '.join(r for r in short if timeouts[r] == limit)}"
                for limit in sorted({timeouts[r] for r in short})
            )
            raise_what = (
                "LESSONLOOP_TIMEOUT"
                if len(short) == len(timeouts)
                else ", ".join(f"LESSONLOOP_{role.upper()}_TIMEOUT" for role in short)
            )
            busy = (
                "; if other clients were using the server, check again when it is idle"
                if report["basis"].startswith("measured from")
                else ""
            )
            report["detail"] = (
                f"timeout {'may be ' if assumed else ''}too short: {largest}, "
                f"more than the timeout ({limits}); raise {raise_what}; "
                f"{speeds}{busy}"
            )
        else:
            report["detail"] = (
                f"{largest}, within every timeout (shortest {min(timeouts.values()):g} s); {speeds}"
            )
        return report

    def _sample(self, wait: float) -> dict:
        """One tiny completion, timed: its counts, the speeds and the largest call's estimate."""
        need = self.need
        nonce = secrets.token_hex(6)  # defeats a prompt cache: the prompt is read, not recalled
        body = {
            "model": self.route.model,
            "temperature": 0,
            "max_tokens": PROBE_ANSWER,
            "messages": [
                {
                    "role": "user",
                    "content": (
                        f"[lessonloop doctor {nonce}] This is a short check of how fast this server "
                        "reads a prompt and writes an answer; the text only needs to be long enough "
                        "to time. Count from 1 to 50, separated by spaces."
                    ),
                }
            ],
        }
        started = self.clock()
        answer = self._complete(body, wait)
        sample = self._rates(answer if isinstance(answer, dict) else {}, self.clock() - started)
        sample["estimate"] = (
            need["prompt_tokens"] / sample["prompt_tokens_per_second"]
            + need["answer_tokens"] / sample["answer_tokens_per_second"]
        )
        return sample

    def _complete(self, body: dict, wait: float) -> Any:
        def send(arguments: dict) -> Any:
            return self._call(
                lambda: self.provider.client.post(
                    f"{self.base_url}/chat/completions",
                    cast_to=object,
                    body=arguments,
                    options={"timeout": wait},
                )
            )

        try:
            return send(body)
        except ProviderError as exc:  # reasoning models want max_completion_tokens
            if exc.status not in (400, 422) or "max_tokens" not in exc.message:
                raise
            retry = {k: v for k, v in body.items() if k != "max_tokens"}
            return send({**retry, "max_completion_tokens": PROBE_ANSWER})

    @staticmethod
    def _rates(answer: dict, elapsed: float) -> dict:
        """Reading and writing speeds: the server's own timings (llama.cpp), else the usage
        and the wall time with WRITE_COST, else the CPU assumption."""
        usage = _object(answer.get("usage"))
        details = usage.get("prompt_tokens_details")
        cached = _count((details or {}).get("cached_tokens")) if isinstance(details, dict) else None
        prompt = _count(usage.get("prompt_tokens"))
        written = _count(usage.get("completion_tokens")) or 0
        read = max(0, (prompt or 0) - (cached or 0))
        probe = {
            "seconds": round(elapsed, 3),
            "prompt_tokens": prompt,
            "cached_tokens": cached or 0,
            "completion_tokens": written,
        }
        timings = _object(answer.get("timings"))
        reading, writing = (
            _rate(timings.get("prompt_per_second")),
            _rate(timings.get("predicted_per_second")),
        )
        if reading and writing and (_count(timings.get("prompt_n")) or 0) >= MIN_MEASURED_PROMPT:
            return {
                "probe": probe,
                "prompt_tokens_per_second": round(reading, 1),
                "answer_tokens_per_second": round(writing, 1),
                "basis": "measured by the server's own timings",
            }
        if prompt is not None and read >= MIN_MEASURED_PROMPT and elapsed > 0:
            reading = (read + WRITE_COST * written) / elapsed
            return {
                "probe": probe,
                "prompt_tokens_per_second": round(reading, 1),
                "answer_tokens_per_second": round(reading / WRITE_COST, 1),
                "basis": f"measured from {read} prompt and {written} answer tokens in "
                f"{elapsed:.2f} s of wall time (which includes any wait in the "
                f"server's queue; writing a token taken as {WRITE_COST:g}x reading one)",
            }
        return {
            "probe": probe,
            "prompt_tokens_per_second": CPU_PROMPT_RATE,
            "answer_tokens_per_second": CPU_PROMPT_RATE / WRITE_COST,
            "basis": f"assumed as a CPU server's (the answer reported "
            f"{'no' if prompt is None else read} prompt tokens read, too few to time)",
        }
