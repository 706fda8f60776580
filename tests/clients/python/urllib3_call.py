"""One call of urllib3 with a `Retry`, for retrylab's real backend.

Run by `tests/src/clients/urllib3.rs` once per call of a scenario. Its only argument is a
JSON object: `method`, `url`, `headers` (an object), `body` (a string) and `retry`, the
keyword arguments of `urllib3.util.Retry` (`allowed_methods` left out keeps urllib3's
default, which has no POST). It prints one JSON line: urllib3's version and either the
status of the response urllib3 returned, with the statuses it retried, or the exception
that ended the call.
"""

import json
import sys

import urllib3
from urllib3.util import Retry


def main() -> None:
    spec = json.loads(sys.argv[1])
    retry = Retry(**spec["retry"])
    # A PoolManager reads no proxy from the environment, so the request goes to the URL.
    http = urllib3.PoolManager(retries=retry)
    body = spec["body"].encode() if spec["body"] else None
    result = {"urllib3": urllib3.__version__}
    try:
        response = http.request(
            spec["method"], spec["url"], headers=spec["headers"], body=body
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


if __name__ == "__main__":
    main()
