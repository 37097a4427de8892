"""Calling a hosted endpoint through its SDK: retries, backoff and errors a user can act on.

Both official SDKs raise the same shapes (``APIStatusError`` with ``status_code`` and the
response headers, ``APIConnectionError`` for network trouble and timeouts), so one policy
serves them. The SDKs' own retries are turned off: this is the only retry loop, so what is
retried, how long it waits and what gets counted are the same for every provider.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable
from types import ModuleType
from typing import TypeVar

from ..errors import EndpointUnavailable, ProviderError
from ..safety import redact

T = TypeVar("T")

BASE_DELAY, MAX_DELAY = 0.5, 30.0  # seconds; the n-th retry waits up to BASE_DELAY * 2**n
MAX_RETRY_AFTER = 120.0  # a server asking for longer than this is treated as unavailable
MAX_CONNECT_DELAY = 5.0  # seconds between tries while a down loopback server is waited for


def retryable(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def retry_after(headers) -> float | None:
    """Seconds a server asked us to wait (``retry-after-ms``, ``retry-after`` in seconds or as
    an HTTP date), or None."""
    if headers is None:
        return None
    try:
        milliseconds = headers.get("retry-after-ms")
        if milliseconds is not None:
            return max(0.0, float(milliseconds) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def backoff(retry: int, rng: random.Random) -> float:
    """Exponential backoff with full jitter: spreads clients that failed together."""
    return rng.uniform(0, min(MAX_DELAY, BASE_DELAY * 2**retry))


def _detail(exc: BaseException, secret: str | None) -> str:
    """The server's or library's message as one redacted, capped line; the key itself is cut
    out literally first (a server may echo any key, in any shape)."""
    text = str(getattr(exc, "message", None) or str(exc) or exc.__class__.__name__)
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[REDACTED:api-key]")
    return redact(re.sub(r"\s+", " ", text).strip())[:300]


def call(
    send: Callable[[], T],
    *,
    sdk: ModuleType,
    where: str,
    key_hint: str,
    model: str | None,
    max_retries: int,
    secret: str | None = None,
    connect_wait: float = 0.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    rng: random.Random | None = None,
) -> tuple[T, int]:
    """``send()`` with retries on 429, 5xx and connection errors; returns (result, retries).

    ``where`` names the endpoint in messages (provider and base URL); ``key_hint`` names the
    variable that holds the key, never the key. A timeout is retried once at most: a slow
    server given the same work again only gets slower. With ``connect_wait`` (loopback
    endpoints), a refused or dropped connection or a 503 (a server loading its model) is
    tried again for that many seconds, outside the retry count: a local server restarting
    takes 7-47 s to load a model.
    """
    rng = rng or random.Random()
    retries = timeouts = 0
    down_since: float | None = None  # when a loopback server was first found down
    while True:
        down = False
        try:
            return send(), retries
        except sdk.APIStatusError as exc:
            status = exc.status_code
            if status == 401:
                raise ProviderError(
                    f"{where} rejected the API key (401): check {key_hint}", status
                ) from None
            if status == 403:
                raise ProviderError(
                    f"{where} refused access (403): the key lacks permission "
                    f"for model {model!r}: {_detail(exc, secret)}",
                    status,
                ) from None
            if status == 404:
                raise ProviderError(
                    f"{where} has no such model or endpoint (404): check the "
                    f"model {model!r} and the base URL",
                    status,
                ) from None
            if not retryable(status):
                raise ProviderError(
                    f"{where} refused the request ({status}): {_detail(exc, secret)}", status
                ) from None
            wait = retry_after(getattr(exc.response, "headers", None))
            problem = f"{status}: {_detail(exc, secret)}"
            down = status == 503
        except sdk.APIConnectionError as exc:  # includes timeouts
            wait = None
            timed_out = isinstance(exc, sdk.APITimeoutError)
            timeouts += timed_out
            problem = "timed out" if timed_out else f"connection failed: {_detail(exc, secret)}"
            down = not timed_out
        except (ValueError, sdk.APIResponseValidationError) as exc:  # a body that is not JSON
            raise ProviderError(
                f"{where} sent a malformed response: {_detail(exc, secret)}"
            ) from None
        if down and connect_wait > 0:
            now = clock()
            down_since = now if down_since is None else down_since
            if now - down_since >= connect_wait:
                raise EndpointUnavailable(
                    f"{where} is down ({problem}) and did not come back "
                    f"within {connect_wait:g} s (LESSONLOOP_CONNECT_WAIT); "
                    "start the server and resume"
                )
            sleep(
                min(
                    MAX_CONNECT_DELAY,
                    connect_wait - (now - down_since),
                    wait if wait is not None else BASE_DELAY * 2 ** min(retries, 4),
                )
            )
            retries += 1
            continue
        down_since = None
        if wait is not None and wait > MAX_RETRY_AFTER:
            raise ProviderError(
                f"{where} failed ({problem}) and asked to wait {wait:.0f} s, "
                f"longer than {MAX_RETRY_AFTER:.0f} s; try again later"
            )
        if retries >= max_retries or timeouts > 1:
            tries = "once" if retries == 0 else f"{retries + 1} times"
            raise ProviderError(f"{where} failed ({problem}); tried {tries}, giving up")
        sleep(wait if wait is not None else backoff(retries, rng))
        retries += 1
