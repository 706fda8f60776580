# Library: tenacity 9.2.1 (PyPI `tenacity==9.2.1`, tests/conformance/requirements.txt),
#   wrapping one `requests` 2.34.2 Session.request per attempt (the session itself does
#   not retry: requests' default `Retry(0, read=False)`).
# Configuration (tenacity knows nothing of HTTP: what to retry is this program's choice):
#   @retry(stop=stop_after_attempt(4),
#          wait=wait_random_exponential(multiplier=0.5, max=10),
#          retry=retry_if_exception_type((requests.ConnectionError, requests.Timeout))
#                | retry_if_result(lambda r: r.status_code in {429, 500, 502, 503, 504}))
#   reraise=False (the default), timeout=(10, 10) per attempt. Every method is retried,
#   POST included: tenacity retries the function, whatever it sends.
#
# What tenacity 9.2.1 documents, quoted from its docstrings under
# target/conformance/venv/lib/python3.11/site-packages/tenacity/ (its README, in
# target/conformance/venv/lib/python3.11/site-packages/tenacity-9.2.1.dist-info/METADATA,
# only points to the online documentation):
# - Attempts (stop.py): stop_after_attempt: "Stop when the previous attempt >=
#   max_attempt." -> 4 attempts at most.
# - What is retried (retry.py): retry_if_exception_type: "Retries if an exception has been
#   raised of one or more types."; retry_if_result: "Retries if the result verifies a
#   predicate." Statuses and methods are this program's predicate, above.
# - Retry-After: tenacity does not read it. wait.py shows it only in an example for user
#   code, wait_exception: "Wait strategy that waits the amount of time returned by the
#   predicate." (not used here: this client ignores Retry-After).
# - Backoff and jitter (wait.py): wait_random_exponential: "Random wait with exponentially
#   widening window." "Each retry occurs at a random time in a geometrically expanding
#   interval. It allows for a custom multiplier and an ability to restrict the upper limit
#   of the random interval to some maximum value." Read in the source: the window's top is
#   wait_exponential's `multiplier * exp_base ** (attempt_number - 1)` clamped to
#   [min, max], and the wait is `random.uniform(self.min, high)`: full jitter, so with
#   multiplier 0.5 the waits are U(0, 0.5s), U(0, 1s), U(0, 2s).
# - Out of attempts: tenacity raises its RetryError, "Encapsulates the last attempt
#   instance right before giving up." (__init__.py); printed as `error RetryError: ...`
#   with the last attempt's status or exception.
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/tenacity_requests.py URL

import requests
from tenacity import (
    RetryError,
    retry,
    retry_if_exception_type,
    retry_if_result,
    stop_after_attempt,
    wait_random_exponential,
)

from _contract import ATTEMPT_TIMEOUT, Call, read_call, report_error, report_failure, report_status

RETRY_STATUSES = {429, 500, 502, 503, 504}


def main() -> None:
    call = read_call()
    session = requests.Session()
    session.trust_env = False

    @retry(
        stop=stop_after_attempt(4),
        wait=wait_random_exponential(multiplier=0.5, max=10),
        retry=retry_if_exception_type((requests.ConnectionError, requests.Timeout))
        | retry_if_result(lambda response: response.status_code in RETRY_STATUSES),
    )
    def attempt(call: Call) -> requests.Response:
        return session.request(
            call.method,
            call.url,
            headers=call.headers,
            data=call.body_or_none,
            timeout=(ATTEMPT_TIMEOUT, ATTEMPT_TIMEOUT),
        )

    try:
        response = attempt(call)
    except RetryError as error:
        last = error.last_attempt
        if last.failed:
            report_error(last.exception(), kind="RetryError")
        report_failure(
            "RetryError",
            f"gave up after {last.attempt_number} attempts, "
            f"last status {last.result().status_code}",
        )
    except requests.exceptions.RequestException as error:
        report_error(error)
    report_status(response.status_code)


if __name__ == "__main__":
    main()
