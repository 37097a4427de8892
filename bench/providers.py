"""What the provider layer costs per call beyond the HTTP round trip (target ≤ 5 ms).

Against a loopback server that answers at once in each wire format, the median of many calls:
1. the bare round trip: ``http.client`` posting the same request on a kept-alive connection;
2. the official SDK called directly (its own parsing and validation);
3. lessonloop's provider (routing, retries, usage and cost on top of the SDK).
The target compares 3 with 1, so the SDK's own work counts against us too.

Usage: python bench/providers.py [CALLS]   (needs the anthropic and openai extras)
"""

from __future__ import annotations

import http.client
import json
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test servers

from lessonloop import config  # noqa: E402
from lessonloop.providers.base import Request  # noqa: E402
from lessonloop.providers.registry import build  # noqa: E402
from tests.providers.fake_servers import FakeServer  # noqa: E402

TARGET_MS = 5.0
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}


def median_ms(call, calls: int) -> float:
    for _ in range(20):  # warm connections and caches
        call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def measure(kind: str, calls: int) -> float:
    with FakeServer() as server:
        base_url = server.base_url + ("/v1" if kind == "openai" else "")
        settings = config.load(
            environ={
                "LESSONLOOP_PROVIDER": kind,
                "LESSONLOOP_MODEL": "bench-model",
                "LESSONLOOP_BASE_URL": base_url,
                "LESSONLOOP_API_KEY": "bench-key",
            }
        )
        provider = build(settings.route("competitor"), settings)
        request = Request(
            role="competitor",
            system="be brief",
            messages=[{"role": "user", "content": "hello " * 50}],
        )
        body = json.dumps(
            {
                "model": "bench-model",
                "max_tokens": 64,
                "system": "be brief",
                "messages": request.messages,
            }
        ).encode()
        connection = http.client.HTTPConnection(urlsplit(server.base_url).netloc)

        def bare():
            connection.request(
                "POST",
                PATHS[kind],
                body=body,
                headers={"content-type": "application/json", "authorization": "Bearer bench-key"},
            )
            connection.getresponse().read()

        def sdk():
            if kind == "anthropic":
                provider.client.messages.create(
                    model="bench-model", max_tokens=64, system="be brief", messages=request.messages
                )
            else:
                provider.client.chat.completions.create(
                    model="bench-model",
                    max_tokens=64,
                    messages=[{"role": "system", "content": "be brief"}, *request.messages],
                )

        bare_ms = median_ms(bare, calls)
        sdk_ms = median_ms(sdk, calls)
        ours_ms = median_ms(lambda: provider.complete(request), calls)
        connection.close()
    added = ours_ms - bare_ms
    print(
        f"{kind}: round trip {bare_ms:.2f} ms, SDK {sdk_ms:.2f} ms, lessonloop provider "
        f"{ours_ms:.2f} ms (median of {calls}); added beyond the round trip {added:.2f} ms, "
        f"of which the SDK {sdk_ms - bare_ms:.2f} ms; target ≤ {TARGET_MS:g} ms: "
        f"{'OK' if added <= TARGET_MS else 'MISSED'}"
    )
    return added


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    for kind in ("anthropic", "openai"):
        measure(kind, calls)


if __name__ == "__main__":
    main()
