# Library: stamina 26.1.0 (PyPI `stamina==26.1.0`, on tenacity 9.2.1;
#   tests/conformance/requirements.txt), wrapping one `httpx` 0.29.0 Client.request +
#   raise_for_status() per attempt (httpx itself does not retry).
# Configuration, the README's example as written:
#   @stamina.retry(on=httpx.HTTPError, attempts=3), the other parameters stamina's
#   defaults (timeout=45.0, wait_initial=0.1, wait_max=5.0, wait_jitter=1.0,
#   wait_exp_base=2); httpx.Client(timeout=10.0, trust_env=False). As in the README,
#   `httpx.HTTPError` covers every status raise_for_status() raises on (4xx and 5xx alike,
#   404 included) and transport errors; every method, POST included, is retried.
#   stamina_httpx_retry_after.py beside it uses a backoff hook instead.
#
# What stamina 26.1.0 documents, quoted from its README (the long description in
# target/conformance/venv/lib/python3.11/site-packages/stamina-26.1.0.dist-info/METADATA)
# and the docstring of `stamina.retry` in
# target/conformance/venv/lib/python3.11/site-packages/stamina/_core.py:
# - Attempts: "attempts: Maximum total number of attempts. Can be combined with *timeout*."
#   and "timeout: Maximum total time for all retries." -> 3 attempts, within 45 s.
# - What is retried: "on: An Exception or a tuple of Exceptions on which the decorated
#   callable will be retried." The README: "Retry only on certain exceptions".
# - Retry-After: not read unless a backoff hook returns it: "the hook may return a float
#   or a :class:`datetime.timedelta` to specify a custom backoff that overrides the default
#   backoff. This is useful when the error carries information like a" Retry-After header
#   (not here: this client ignores Retry-After).
# - Backoff and jitter: "The backoff delays between retries grow exponentially plus a
#   random jitter." "min(wait\_max, wait\_initial * wait\_exp\_base^{attempt - 1} +
#   random(0, wait\_jitter))" "Thus, with default values between 0.1 and 1.1 seconds."
#   -> waits in [0.1, 1.1] s, then [0.2, 1.2] s.
# - Out of attempts: "If all retries fail, the *last* exception is let through." -> the
#   last HTTPStatusError, printed as `status <code>` of its response.
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/stamina_httpx.py URL

import httpx
import stamina

from _contract import ATTEMPT_TIMEOUT, read_call, report_error, report_status


def main() -> None:
    call = read_call()
    client = httpx.Client(timeout=ATTEMPT_TIMEOUT, trust_env=False)

    @stamina.retry(on=httpx.HTTPError, attempts=3)
    def attempt() -> httpx.Response:
        response = client.request(
            call.method, call.url, headers=call.headers, content=call.body_or_none
        )
        response.raise_for_status()
        return response

    try:
        response = attempt()
    except httpx.HTTPStatusError as error:
        report_status(error.response.status_code)
    except httpx.HTTPError as error:
        report_error(error)
    report_status(response.status_code)


if __name__ == "__main__":
    main()
