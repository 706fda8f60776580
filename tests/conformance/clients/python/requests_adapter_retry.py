# Library: requests 2.34.2 on urllib3 2.8.0 (PyPI `requests==2.34.2`, `urllib3==2.8.0`,
#   tests/conformance/requirements.txt): a Session with
#   `HTTPAdapter(max_retries=Retry(...))` mounted on http:// and https://, one
#   `Session.request(...)` per call.
# Configuration:
#   HTTPAdapter(max_retries=Retry(total=3, backoff_factor=0.5,
#       status_forcelist=[429, 500, 502, 503, 504], respect_retry_after_header=True)),
#   timeout=(10, 10) (connect, read) per attempt. The Retry is urllib3's: requests hands
#   it to urllib3's `urlopen(..., retries=self.max_retries)`.
#
# What requests 2.34.2 documents, quoted from the docstring of `HTTPAdapter` in
# target/conformance/venv/lib/python3.11/site-packages/requests/adapters.py:
# - "max_retries: The maximum number of retries each connection should attempt. Note, this
#   applies only to failed DNS lookups, socket connections and connection timeouts, never
#   to requests where data has made it to the server. By default, Requests does not retry
#   failed connections. If you need granular control over the conditions under which we
#   retry a request, import urllib3's ``Retry`` class and pass that instead."
#   (That first sentence is about an integer; a Retry object retries as urllib3 says.)
# - Out of retries on a status: `send()` turns urllib3's MaxRetryError whose reason is a
#   ResponseError into `requests.exceptions.RetryError` (read in the source, same file),
#   printed as `error RetryError: ...`.
# What urllib3 2.8.0 documents for that Retry, quoted from the docstring of `Retry` in
# target/conformance/venv/lib/python3.11/site-packages/urllib3/util/retry.py:
# - Attempts: "Total number of retries to allow. Takes precedence over other counts."
#   -> at most 4 attempts.
# - Statuses: "A retry is initiated if the request method is in ``allowed_methods`` and the
#   response status code is in ``status_forcelist``."
# - Methods: "By default, we only retry on methods which are considered to be idempotent
#   (multiple requests with the same parameters end with the same state)."
#   (`DEFAULT_ALLOWED_METHODS`: HEAD, GET, PUT, DELETE, OPTIONS, TRACE: no POST.)
# - Retry-After: "Whether to respect Retry-After header on status codes defined as
#   :attr:`Retry.RETRY_AFTER_STATUS_CODES` or not." (413, 429, 503); "This method will
#   respect a server's ``Retry-After`` response header and sleep the duration of the time
#   requested. If that is not present, it will use an exponential backoff." Seconds or an
#   HTTP-date (`parse_retry_after()`: digits are seconds, else `email.utils.parsedate_tz`),
#   capped at 21600 s; `Retry-After: 0` falls back to the backoff.
# - Backoff: "{backoff factor} * (2 ** ({number of previous retries}))" and "if the
#   backoff_factor is 0.1, then :func:`Retry.sleep` will sleep for [0.0s, 0.2s, 0.4s, 0.8s,
#   ...] between retries." -> with 0.5: 0s, 1s, 2s. No jitter ("If `backoff_jitter` is
#   non-zero, this sleep is extended by", default 0.0).
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/requests_adapter_retry.py URL

import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from _contract import ATTEMPT_TIMEOUT, read_call, report_error, report_status


def main() -> None:
    call = read_call()
    retry = Retry(
        total=3,
        backoff_factor=0.5,
        status_forcelist=[429, 500, 502, 503, 504],
        respect_retry_after_header=True,
    )
    session = requests.Session()
    # Nothing from the environment (proxies, .netrc) between the client and the URL.
    session.trust_env = False
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    try:
        response = session.request(
            call.method,
            call.url,
            headers=call.headers,
            data=call.body_or_none,
            timeout=(ATTEMPT_TIMEOUT, ATTEMPT_TIMEOUT),
        )
    except requests.exceptions.RequestException as error:
        report_error(error)
    report_status(response.status_code)


if __name__ == "__main__":
    main()
