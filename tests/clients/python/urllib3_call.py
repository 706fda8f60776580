"""One call of urllib3 with a `Retry`, as a retrylab command client.

Run once per call by the files of `scenarios/real/urllib3-*.yaml` (`client: { command:
[python3, tests/clients/python/urllib3_call.py, ...] }`):

    urllib3_call.py --total 3 --backoff-factor 0.2 --status-forcelist 500,502,503,504 URL

The options are the keyword arguments of `urllib3.util.Retry` (`allowed_methods` left out
keeps urllib3's default, which has no POST); `respect_retry_after_header` is urllib3's
default, True. The method is `RETRYLAB_METHOD`, the body the standard input, and the
idempotency key, when the scenario has one, `RETRYLAB_IDEMPOTENCY_HEADER` and
`RETRYLAB_IDEMPOTENCY_KEY`. It prints one JSON line: urllib3's version and either the status
of the response urllib3 returned, with the statuses it retried, or the exception that ended
the call; it exits 0 when the status is below 400, 1 otherwise.
"""

import argparse
import json
import os
import sys

import urllib3
from urllib3.util import Retry


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--total", type=int, required=True)
    parser.add_argument("--backoff-factor", type=float, default=0.0)
    parser.add_argument("--status-forcelist", default="")
    parser.add_argument("url")
    args = parser.parse_args()
    forcelist = [int(s) for s in args.status_forcelist.split(",") if s]
    retry = Retry(
        total=args.total,
        backoff_factor=args.backoff_factor,
        status_forcelist=forcelist,
        respect_retry_after_header=True,
    )
    headers = {"x-retrylab-call": os.environ.get("RETRYLAB_CALL", "0")}
    if "RETRYLAB_IDEMPOTENCY_HEADER" in os.environ:
        headers[os.environ["RETRYLAB_IDEMPOTENCY_HEADER"]] = os.environ[
            "RETRYLAB_IDEMPOTENCY_KEY"
        ]
    body = sys.stdin.buffer.read() or None
    # A PoolManager reads no proxy from the environment, so the request goes to the URL.
    http = urllib3.PoolManager(retries=retry)
    result = {"urllib3": urllib3.__version__}
    try:
        response = http.request(
            os.environ.get("RETRYLAB_METHOD", "GET"), args.url, headers=headers, body=body
        )
        result["status"] = response.status
        # The Retry the response came back with: one history entry per retry made.
        history = response.retries.history if response.retries else ()
        result["retried"] = [entry.status for entry in history]
    except urllib3.exceptions.MaxRetryError as error:
        result["exception"] = "MaxRetryError"
        result["reason"] = type(error.reason).__name__
    except urllib3.exceptions.HTTPError as error:
        result["exception"] = type(error).__name__
        result["reason"] = str(error)
    print(json.dumps(result))
    return 0 if result.get("status", 600) < 400 else 1


if __name__ == "__main__":
    sys.exit(main())
