# Library: anthropic 2.17.0, the Anthropic Python SDK, on httpx2 2.17.0 (PyPI
#   `anthropic==2.17.0`, tests/conformance/requirements.txt): one
#   `client.messages.create(...)` per call, i.e. a POST to `<base_url>/v1/messages`.
# Configuration:
#   Anthropic(api_key='retrylab', base_url=<base>, max_retries=3, timeout=10.0,
#             default_headers={'x-retrylab-call': ...}); the idempotency key, when the
#   operation has one, as `extra_headers`. <base> is the URL without its `/v1/messages`
#   suffix, so the scenario's operation must be `method: POST` with a path ending in
#   `/v1/messages`; for a URL without that suffix <base> is the URL's origin, and the SDK
#   still POSTs to /v1/messages. RETRYLAB_METHOD and stdin are ignored: the SDK sends its
#   own JSON body ({'model': 'retrylab', 'max_tokens': 16, 'messages': [...]}).
#
# The package's README (target/conformance/venv/lib/python3.11/site-packages/anthropic-2.17.0.dist-info/METADATA)
# says nothing of retries; it sends to the online documentation ("Full documentation is
# available at"). What the source says, quoted from
# target/conformance/venv/lib/python3.11/site-packages/anthropic/_base_client.py and
# target/conformance/venv/lib/python3.11/site-packages/anthropic/_constants.py:
# - Attempts: `for retries_taken in range(max_retries + 1):` -> with max_retries=3, at most
#   4 attempts (DEFAULT_MAX_RETRIES = 2).
# - Statuses, `_should_retry()`: "# If the server explicitly says whether or not to retry,
#   obey." (`x-should-retry: true|false`), then "# Retry on request timeouts." (408),
#   "# Retry on lock timeouts." (409), "# Retry on rate limits." (429), "# Retry internal
#   errors." (>= 500); connection errors and timeouts are retried too
#   (`_should_retry_exception()`: "`APIConnectionError` / `APITimeoutError`").
# - Methods: every method, POST included; "# ensure the idempotency key is reused between
#   requests" (a key is kept per call, but sent only when a client sets an idempotency
#   header, which Anthropic() does not).
# - Retry-After: "# If the API asks us to wait a certain amount of time, just do what it
#   says." `_parse_retry_after_header()`: "# First, try the non-standard `retry-after-ms`
#   header for milliseconds," then "# Next, try parsing `retry-after` header as seconds
#   (allowing nonstandard floats)." then "# Last, try parsing `retry-after` as a date."
#   Used when "if retry_after is not None and retry_after > 0:", with no cap but the
#   platform's ("so wait at most that long.", 4,294,967 s).
# - Backoff: "sleep_seconds = min(INITIAL_RETRY_DELAY * pow(2.0, nb_retries),
#   MAX_RETRY_DELAY)" with INITIAL_RETRY_DELAY = 0.5, MAX_RETRY_DELAY = 8.0 -> 0.5s, 1s, 2s.
# - Jitter: "# Apply some jitter, plus-or-minus half a second." but the code is
#   `jitter = 1 - 0.25 * random()` -> waits in [0.375, 0.5], [0.75, 1], [1.5, 2] s (the
#   comment and the code disagree; the code is what runs).
# - Out of retries: the last status raises an APIStatusError (printed as `status <code>`).
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/anthropic_sdk.py URL

import logging

import anthropic

from _contract import ATTEMPT_TIMEOUT, read_call, report_error, report_status


def main() -> None:
    logging.getLogger("anthropic").addHandler(logging.NullHandler())
    call = read_call()
    extra = {k: v for k, v in call.headers.items() if k != "x-retrylab-call"}
    client = anthropic.Anthropic(
        api_key="retrylab",
        base_url=call.base_url("/v1/messages"),
        max_retries=3,
        timeout=ATTEMPT_TIMEOUT,
        default_headers={"x-retrylab-call": call.index},
    )
    try:
        raw = client.messages.with_raw_response.create(
            model="retrylab",
            max_tokens=16,
            messages=[{"role": "user", "content": "retrylab"}],
            extra_headers=extra or None,
        )
    except anthropic.APIStatusError as error:
        report_status(error.status_code)
    except anthropic.AnthropicError as error:
        report_error(error)
    report_status(raw.status_code)


if __name__ == "__main__":
    main()
