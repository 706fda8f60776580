# Library: openai 3.63.0, the OpenAI Python SDK, on httpx2 2.17.0 (PyPI `openai==3.63.0`,
#   tests/conformance/requirements.txt): one `client.chat.completions.create(...)` per
#   call, i.e. a POST to `<base_url>/chat/completions`.
# Configuration:
#   OpenAI(api_key='retrylab', base_url=<base>, max_retries=3, timeout=10.0,
#          default_headers={'x-retrylab-call': ...}); the idempotency key, when the
#   operation has one, as `extra_headers`. <base> is the URL without its
#   `/chat/completions` suffix, so the scenario's operation must be `method: POST` with a
#   path ending in `/chat/completions` (e.g. `/v1/chat/completions`); for a URL without
#   that suffix <base> is the URL's origin, and the SDK still POSTs to /chat/completions.
#   RETRYLAB_METHOD and stdin are ignored: the SDK sends its own JSON body
#   ({'model': 'retrylab', 'messages': [...]}).
#
# What openai 3.63.0 documents, quoted from its README (the long description in
# target/conformance/venv/lib/python3.11/site-packages/openai-3.63.0.dist-info/METADATA):
# - "Certain errors are automatically retried 2 times by default, with a short exponential
#   backoff. Connection errors (for example, due to a network connectivity problem), 408
#   Request Timeout, 409 Conflict, 429 Rate Limit, and >=500 Internal errors are all
#   retried by default." -> with max_retries=3, at most 4 attempts.
# - Methods: "Requests are retried only when their body can be safely resent." (the SDK's
#   POSTs are retried; it adds its own `Idempotency-Key`-style key only where a client sets
#   an idempotency header, which OpenAI() does not).
# - "You can use the `max_retries` option to configure or disable retry settings"
# - "Note that requests that time out are [retried twice by default]"
# Read in the source, target/conformance/venv/lib/python3.11/site-packages/openai/_base_client.py
# and openai/_constants.py (quoted):
# - Retry-After: "# Prefer milliseconds, then seconds (allowing nonstandard floats)." reads
#   `retry-after-ms`, then `retry-after` as a float, then "# Last, try parsing
#   `retry-after` as a date." (email.utils.parsedate_tz, minus time.time()); it is used
#   when "0 < retry_after <= MAX_RETRY_AFTER_DELAY" ("# Honor server-directed delays up to
#   two minutes.", MAX_RETRY_AFTER_DELAY = 2 * 60), and a larger one is not retried at
#   all: "Not retrying because `Retry-After` of %s seconds exceeds the maximum of %s
#   seconds". The header `x-should-retry: true|false` overrides the status rules.
# - Backoff: "sleep_seconds = min(INITIAL_RETRY_DELAY * pow(2.0, nb_retries),
#   MAX_RETRY_DELAY)" with INITIAL_RETRY_DELAY = 0.5, MAX_RETRY_DELAY = 8.0 -> 0.5s, 1s, 2s.
# - Jitter: "# Reduce the calculated timeout by a random range between 0-25%" -> waits in
#   [0.375, 0.5], [0.75, 1], [1.5, 2] s.
# - Out of retries: the last status raises an APIStatusError (printed as `status <code>`).
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/openai_sdk.py URL

import logging

import openai

from _contract import ATTEMPT_TIMEOUT, read_call, report_error, report_status


def main() -> None:
    logging.getLogger("openai").addHandler(logging.NullHandler())
    call = read_call()
    extra = {k: v for k, v in call.headers.items() if k != "x-retrylab-call"}
    client = openai.OpenAI(
        api_key="retrylab",
        base_url=call.base_url("/chat/completions"),
        max_retries=3,
        timeout=ATTEMPT_TIMEOUT,
        default_headers={"x-retrylab-call": call.index},
    )
    try:
        raw = client.chat.completions.with_raw_response.create(
            model="retrylab",
            messages=[{"role": "user", "content": "retrylab"}],
            extra_headers=extra or None,
        )
    except openai.APIStatusError as error:
        report_status(error.status_code)
    except openai.OpenAIError as error:
        report_error(error)
    report_status(raw.status_code)


if __name__ == "__main__":
    main()
