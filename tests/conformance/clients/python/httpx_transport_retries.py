# Library: httpx 0.29.0 on httpcore 1.0.9 (PyPI `httpx==0.29.0`, `httpcore==1.0.9`,
#   tests/conformance/requirements.txt): the transport's connection retries, one
#   `Client.request(...)` per call.
# Configuration:
#   httpx.Client(transport=httpx.HTTPTransport(retries=3), timeout=10.0, trust_env=False).
#   That is all the retrying httpx has: it retries failing connects, never a request that
#   reached the server, whatever its status or method.
#
# What httpx 0.29.0 documents, quoted from the module docstring of
# target/conformance/venv/lib/python3.11/site-packages/httpx/_transports/default.py:
#   "# Using advanced httpcore configuration, with connection retries."
#   "transport = httpx.HTTPTransport(retries=1)"
# and what httpcore 1.0.9 does with it, quoted from
# target/conformance/venv/lib/python3.11/site-packages/httpcore/_sync/connection.py:
# - Attempts and what is retried: `_connect()` catches `except (ConnectError,
#   ConnectTimeout):` only, and gives up "if retries_left <= 0:" -> at most 4 connects;
#   a response of any status (429, 503, ...) is returned at once, and an error after the
#   connection is up (a reset, a read timeout) is not retried. POST is no different.
# - Retry-After: never read (there is no response to read it from).
# - Backoff: "RETRIES_BACKOFF_FACTOR = 0.5  # 0s, 0.5s, 1s, 2s, 4s, etc." and
#   exponential_backoff(): "Generate a geometric sequence that has a ratio of 2 and starts
#   with 0." -> waits 0s, 0.5s, 1s. No jitter.
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/httpx_transport_retries.py URL

import httpx

from _contract import ATTEMPT_TIMEOUT, read_call, report_error, report_status


def main() -> None:
    call = read_call()
    client = httpx.Client(
        transport=httpx.HTTPTransport(retries=3),
        timeout=ATTEMPT_TIMEOUT,
        trust_env=False,
    )
    try:
        response = client.request(
            call.method, call.url, headers=call.headers, content=call.body_or_none
        )
    except httpx.HTTPError as error:
        report_error(error)
    report_status(response.status_code)


if __name__ == "__main__":
    main()
