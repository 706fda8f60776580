# Library: backoff 2.2.1 (PyPI `backoff==2.2.1`, tests/conformance/requirements.txt),
#   wrapping one `requests` 2.34.2 Session.request + raise_for_status() per try (the
#   session itself does not retry: requests' default `Retry(0, read=False)`).
# Configuration, the README's `on_exception` example with `max_tries` and `giveup`:
#   @backoff.on_exception(backoff.expo, requests.exceptions.RequestException,
#                         max_tries=4, giveup=permanent)
#   where `permanent(e)` is true for an HTTPError whose status is not 429, 500, 502, 503 or
#   504 (the README's `fatal_code` gives up on every 4xx, 429 included, and reads
#   `e.response.status_code` of a connection error, whose response is None). expo with its
#   defaults (base 2, factor 1), jitter=full_jitter (the default); timeout=(10, 10) per
#   try. Every method is retried, POST included: backoff retries the function.
#
# What backoff 2.2.1 documents, quoted from its README (the long description in
# target/conformance/venv/lib/python3.11/site-packages/backoff-2.2.1.dist-info/METADATA)
# and its docstrings (target/conformance/venv/lib/python3.11/site-packages/backoff/):
# - Attempts: "Keyword argument ``max_tries`` specifies the maximum number of calls to make
#   to the target function before giving up." -> 4 tries.
# - What is retried: "The ``on_exception`` decorator is used to retry when a specified
#   exception is raised."; "The ``giveup`` keyword arg can be used to specify a function
#   which accepts the exception and returns a truthy value if the exception should not be
#   retried". Statuses and methods are this program's choice, above.
# - Retry-After: not read by `on_exception`; the README shows it only with
#   `backoff.runtime` and `on_predicate`: "For example, to use the value in the
#   ``Retry-After`` header of the response:" (not used here: this client ignores it).
# - Backoff (_wait_gen.py): expo, "Generator for exponential decay." yields
#   `factor * base ** n` for n = 0, 1, 2, ... -> 1s, 2s, 4s before jitter.
# - Jitter: "As of version 1.2, the default jitter function ``backoff.full_jitter``
#   implements the 'Full Jitter' algorithm as defined in the AWS Architecture Blog's"
#   post; "Note that with this algorithm, the time yielded by the wait generator is
#   actually the *maximum* amount of time to wait." (_jitter.py: `random.uniform(0,
#   value)`) -> waits U(0, 1s), U(0, 2s), U(0, 4s).
# - Out of tries: "By default, when a give up event occurs, the exception in question is
#   reraised" -> the last HTTPError, printed as `status <code>` of its response, or the
#   last connection error as `error <class>: ...`.
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/backoff_requests.py URL

import logging

import backoff
import requests

from _contract import ATTEMPT_TIMEOUT, Call, read_call, report_error, report_status

RETRY_STATUSES = {429, 500, 502, 503, 504}


def permanent(error: Exception) -> bool:
    """backoff's `giveup`: a status outside RETRY_STATUSES is not retried."""
    response = getattr(error, "response", None)
    return response is not None and response.status_code not in RETRY_STATUSES


def main() -> None:
    # backoff logs each retry to the `backoff` logger; keep stdout to the one line.
    logging.getLogger("backoff").addHandler(logging.NullHandler())
    call = read_call()
    session = requests.Session()
    session.trust_env = False

    @backoff.on_exception(
        backoff.expo,
        requests.exceptions.RequestException,
        max_tries=4,
        giveup=permanent,
    )
    def attempt(call: Call) -> requests.Response:
        response = session.request(
            call.method,
            call.url,
            headers=call.headers,
            data=call.body_or_none,
            timeout=(ATTEMPT_TIMEOUT, ATTEMPT_TIMEOUT),
        )
        response.raise_for_status()
        return response

    try:
        response = attempt(call)
    except requests.exceptions.HTTPError as error:
        report_status(error.response.status_code)
    except requests.exceptions.RequestException as error:
        report_error(error)
    report_status(response.status_code)


if __name__ == "__main__":
    main()
