# Library: stamina 26.1.0 (PyPI `stamina==26.1.0`, on tenacity 9.2.1;
#   tests/conformance/requirements.txt), wrapping one `httpx` 0.29.0 Client.request +
#   raise_for_status() per attempt (httpx itself does not retry).
# Configuration: a backoff hook, as the docstring of `stamina.retry` describes it:
#   @stamina.retry(on=transient, attempts=4), the other parameters stamina's defaults
#   (timeout=45.0, wait_initial=0.1, wait_max=5.0, wait_jitter=1.0, wait_exp_base=2);
#   httpx.Client(timeout=10.0, trust_env=False). `transient(error)` is this program's:
#   False for a status other than 429, 500, 502, 503, 504 (not retried); for one of them,
#   the response's Retry-After when it is a number of seconds above 0 (a float: stamina
#   then waits exactly that), else True (stamina's own backoff); True for a transport
#   error. An HTTP-date Retry-After is not parsed: the hook returns True and stamina backs
#   off. Every method, POST included, is retried.
#
# What stamina 26.1.0 documents, quoted from the docstring of `stamina.retry` in
# target/conformance/venv/lib/python3.11/site-packages/stamina/_core.py:
# - Attempts: "attempts: Maximum total number of attempts. Can be combined with *timeout*."
#   and "timeout: Maximum total time for all retries." -> 4 attempts, within 45 s.
# - What is retried: "You can also pass a *backoff hook* in the form of a callable that
#   takes an exception and returns a bool which decides whether the exception should be
#   retried -- True meaning yes."
# - Retry-After: "For even more control, the hook may return a float or a
#   :class:`datetime.timedelta` to specify a custom backoff that overrides the default
#   backoff. This is useful when the error carries information like a" Retry-After header.
#   "A custom backoff is not part of the exponential backoff machinery so none of the
#   other backoff parameters apply to it." -> the wait is exactly Retry-After (seconds).
# - Backoff and jitter otherwise: "min(wait\_max, wait\_initial * wait\_exp\_base^{attempt -
#   1} + random(0, wait\_jitter))" "Thus, with default values between 0.1 and 1.1
#   seconds."
# - Out of attempts: "If all retries fail, the *last* exception is let through." -> the
#   last HTTPStatusError, printed as `status <code>` of its response.
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/stamina_httpx_retry_after.py URL

import httpx
import stamina

from _contract import ATTEMPT_TIMEOUT, read_call, report_error, report_status

RETRY_STATUSES = {429, 500, 502, 503, 504}


def transient(error: Exception) -> bool | float:
    """stamina's backoff hook: whether to retry, or how long to wait first."""
    if isinstance(error, httpx.HTTPStatusError):
        if error.response.status_code not in RETRY_STATUSES:
            return False
        retry_after = error.response.headers.get("Retry-After", "").strip()
        if retry_after.isdigit() and int(retry_after) > 0:
            return float(retry_after)
        return True
    return isinstance(error, httpx.TransportError)


def main() -> None:
    call = read_call()
    client = httpx.Client(timeout=ATTEMPT_TIMEOUT, trust_env=False)

    @stamina.retry(on=transient, attempts=4)
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
