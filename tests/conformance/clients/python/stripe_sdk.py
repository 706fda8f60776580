# Library: stripe 16.1.0, the Stripe Python SDK, on requests 2.34.2 (PyPI
#   `stripe==16.1.0`, tests/conformance/requirements.txt): one `StripeClient.raw_request`
#   per call, to the URL's path with RETRYLAB_METHOD (lowercased; Stripe knows get, post
#   and delete).
# Configuration:
#   StripeClient('sk_test_retrylab', base_addresses={'api': <origin>},
#                max_network_retries=3, http_client=stripe.RequestsClient(timeout=10));
#   per request `headers={'x-retrylab-call': ...}` and the idempotency key, when the
#   operation has one: as Stripe's own `idempotency_key` option when its header is
#   Idempotency-Key (the header Stripe sends), else as one more header. stdin is ignored
#   (raw_request form-encodes its own parameters; none here).
#
# What stripe 16.1.0 documents, quoted from its README (the long description in
# target/conformance/venv/lib/python3.11/site-packages/stripe-16.1.0.dist-info/METADATA):
# - "You can enable automatic retries on requests that fail due to a transient problem by
#   configuring the maximum number of retries:" -> max_network_retries=3, at most 4
#   attempts (no retries when it is not set).
# - "Various errors can trigger a retry, like a connection error or a timeout, and also
#   certain API responses like HTTP status `409 Conflict`."
# - Methods: "[Idempotency keys][idempotency-keys] are automatically generated and added to
#   requests, when not given, to guarantee that retries are safe." (POSTs are retried.)
# Read in the source, target/conformance/venv/lib/python3.11/site-packages/stripe/_http_client.py
# (quoted):
# - Statuses, `_should_retry()`: "# The API may ask us not to retry (eg; if doing so would
#   be a no-op)" (`stripe-should-retry: true|false` decides), then "# Retry on conflict
#   errors." (409) and "# Retry on 500, 503, and other internal errors." (>= 500): a 429 is
#   NOT retried.
# - Retry-After: never read (no mention of it in the package's retry path).
# - Backoff: "Apply exponential backoff with initial_network_retry_delay on the number of
#   num_retries so far as inputs." `INITIAL_DELAY * (2 ** (num_retries - 1))` capped at
#   MAX_DELAY = 5, with INITIAL_DELAY = 0.5.
# - Jitter: "Randomize the value in `[(sleep_seconds/ 2) to (sleep_seconds)]`." and "# But
#   never sleep less than the base sleep seconds." -> waits 0.5s, then [0.5, 1] s, then
#   [1, 2] s.
# - Out of retries: the last status raises a StripeError (printed as `status <code>` from
#   its http_status).
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/stripe_sdk.py URL

import logging
import urllib.parse

import stripe

from _contract import ATTEMPT_TIMEOUT, read_call, report_error, report_status


def main() -> None:
    logging.getLogger("stripe").addHandler(logging.NullHandler())
    call = read_call()
    client = stripe.StripeClient(
        "sk_test_retrylab",
        base_addresses={"api": call.origin},
        max_network_retries=3,
        http_client=stripe.RequestsClient(timeout=ATTEMPT_TIMEOUT),
    )
    options = {}
    headers = {}
    for name, value in call.headers.items():
        if name.lower() == "idempotency-key":
            options["idempotency_key"] = value
        else:
            headers[name] = value
    parts = urllib.parse.urlsplit(call.url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        response = client.raw_request(
            call.method.lower(), path or "/", headers=headers, **options
        )
    except stripe.StripeError as error:
        if error.http_status:
            report_status(error.http_status)
        report_error(error)
    report_status(response.code)


if __name__ == "__main__":
    main()
