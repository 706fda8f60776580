# Library: urllib3 2.8.0 (PyPI `urllib3==2.8.0`, tests/conformance/requirements.txt):
#   urllib3.util.Retry on a PoolManager, one `PoolManager.request(...)` per call.
# Configuration:
#   Retry(total=3, backoff_factor=0.5, status_forcelist=[429, 500, 502, 503, 504],
#         respect_retry_after_header=True), everything else urllib3's default
#   (allowed_methods, raise_on_status=True, backoff_jitter=0.0, backoff_max=120);
#   Timeout(connect=10, read=10) per attempt.
#
# What urllib3 2.8.0 documents, quoted from the docstring of `Retry` in
# target/conformance/venv/lib/python3.11/site-packages/urllib3/util/retry.py:
# - Attempts: `total`: "Total number of retries to allow. Takes precedence over other
#   counts." -> 3 retries, at most 4 attempts.
# - Statuses: `status_forcelist`: "A set of integer HTTP status codes that we should force a
#   retry on. A retry is initiated if the request method is in ``allowed_methods`` and the
#   response status code is in ``status_forcelist``."
# - Methods: `allowed_methods`: "By default, we only retry on methods which are considered
#   to be idempotent (multiple requests with the same parameters end with the same state).
#   See :attr:`Retry.DEFAULT_ALLOWED_METHODS`."; `DEFAULT_ALLOWED_METHODS = frozenset(
#   ["HEAD", "GET", "PUT", "DELETE", "OPTIONS", "TRACE"])` -> a POST is not retried (on a
#   status nor a read error); its first answer is returned as it is.
# - Retry-After: `respect_retry_after_header`: "Whether to respect Retry-After header on
#   status codes defined as :attr:`Retry.RETRY_AFTER_STATUS_CODES` or not.";
#   `RETRY_AFTER_STATUS_CODES = frozenset([413, 429, 503])`; `sleep()`: "This method will
#   respect a server's ``Retry-After`` response header and sleep the duration of the time
#   requested. If that is not present, it will use an exponential backoff."
#   `retry_after_max`: "Any Retry-After headers larger than this value will be limited to
#   this value." (`DEFAULT_RETRY_AFTER_MAX: typing.Final[int] = 21600`).
#   Seconds and HTTP-date (read in `parse_retry_after()`, same file): a value matching
#   `^\s*[0-9]+\s*$` is seconds, anything else goes through `email.utils.parsedate_tz` and
#   is a date minus `time.time()`, floored at 0; an unparsable one raises InvalidHeader.
#   `sleep_for_retry()` sleeps only `if retry_after:`, so `Retry-After: 0` falls back to
#   the backoff. `is_retry()` also retries a 413/429/503 carrying Retry-After that is not in
#   status_forcelist.
# - Backoff: `backoff_factor`: "A backoff factor to apply between attempts after the second
#   try (most errors are resolved immediately by a second try without a delay). urllib3
#   will sleep for:: {backoff factor} * (2 ** ({number of previous retries})) seconds."
#   "For example, if the backoff_factor is 0.1, then :func:`Retry.sleep` will sleep for
#   [0.0s, 0.2s, 0.4s, 0.8s, ...] between retries. No backoff will ever be longer than
#   `backoff_max`." -> with 0.5: 0s, 1s, 2s.
# - Jitter: "If `backoff_jitter` is non-zero, this sleep is extended by::
#   random.uniform(0, {backoff jitter})" (default 0.0 here: no jitter).
# - Out of retries on a status: `raise_on_status`: "whether we should raise an exception,
#   or return a response, if status falls in ``status_forcelist`` range and retries have
#   been exhausted." (default True: MaxRetryError, printed as `error MaxRetryError: ...`).
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/urllib3_retry.py URL

import urllib3
from urllib3.util import Retry, Timeout

from _contract import ATTEMPT_TIMEOUT, read_call, report_error, report_status


def main() -> None:
    call = read_call()
    retry = Retry(
        total=3,
        backoff_factor=0.5,
        status_forcelist=[429, 500, 502, 503, 504],
        respect_retry_after_header=True,
    )
    # A PoolManager reads no proxy from the environment: the request goes to the URL.
    http = urllib3.PoolManager(
        retries=retry, timeout=Timeout(connect=ATTEMPT_TIMEOUT, read=ATTEMPT_TIMEOUT)
    )
    try:
        response = http.request(
            call.method, call.url, headers=call.headers, body=call.body_or_none
        )
    except urllib3.exceptions.HTTPError as error:
        report_error(error)
    report_status(response.status)


if __name__ == "__main__":
    main()
