"""The command-client contract, shared by the Python programs of this folder.

Not a client itself: each `<library>.py` beside it imports it (Python puts a script's own
folder first on `sys.path`, so `python3 tests/conformance/clients/python/x.py` finds it from
any working directory). See `../README.md` for the contract:

- argv[1] (or `RETRYLAB_URL`) is the full URL of the operation; `RETRYLAB_METHOD` its
  method (GET when absent); `RETRYLAB_CALL` the 0-based call index, forwarded as the header
  `x-retrylab-call` on every attempt; `RETRYLAB_IDEMPOTENCY_KEY` and
  `RETRYLAB_IDEMPOTENCY_HEADER`, when set, one more header, the same on every attempt of
  the call; the request body on stdin (possibly empty).
- One line on stdout, `status <code>` or `error <kind>: <message>`; exit 0 when the final
  answer is 2xx, 1 otherwise.

It uses the standard library only, so it says nothing about any client's retries.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import NoReturn

#: The timeout every program gives its library for one attempt (connect and read), in seconds.
ATTEMPT_TIMEOUT = 10.0


@dataclass
class Call:
    """One logical call, as retrylab describes it."""

    url: str
    method: str
    index: str
    body: bytes
    #: `x-retrylab-call`, and the idempotency key's header when the operation has one.
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def body_or_none(self) -> bytes | None:
        """The body, or None when it is empty (a GET with no body sends none)."""
        return self.body or None

    @property
    def origin(self) -> str:
        """`scheme://host:port` of the URL, for SDKs that take a base URL."""
        scheme, rest = self.url.split("://", 1)
        return f"{scheme}://{rest.split('/', 1)[0]}"

    def base_url(self, suffix: str) -> str:
        """The URL without `suffix` (an SDK's own path, such as `/chat/completions`) when
        it ends with it, else the origin: an SDK given this base URL requests `url`."""
        path = self.url.split("?", 1)[0]
        if path.endswith(suffix):
            return path[: -len(suffix)]
        return self.origin


def read_call() -> Call:
    """Reads the call from argv, the environment and stdin."""
    url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RETRYLAB_URL", "")
    if not url:
        print("error usage: no URL (argv[1] or RETRYLAB_URL)")
        sys.exit(1)
    index = os.environ.get("RETRYLAB_CALL", "0")
    headers = {"x-retrylab-call": index}
    key = os.environ.get("RETRYLAB_IDEMPOTENCY_KEY")
    key_header = os.environ.get("RETRYLAB_IDEMPOTENCY_HEADER")
    if key and key_header:
        headers[key_header] = key
    body = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
    return Call(
        url=url,
        method=os.environ.get("RETRYLAB_METHOD") or "GET",
        index=index,
        body=body,
        headers=headers,
    )


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def exit_now(code: int) -> NoReturn:
    """Exits at once, once the line is out: the call is over, and an interpreter's teardown
    (the anthropic SDK's, after a request it timed out on, sometimes outlived the 30 s
    process timeout) is no part of it."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def report_status(status: int) -> NoReturn:
    """Prints `status <code>` and exits 0 for a 2xx, 1 otherwise."""
    print(f"status {status}", flush=True)
    exit_now(0 if 200 <= status < 300 else 1)


def report_error(error: BaseException, kind: str | None = None) -> NoReturn:
    """Prints `error <kind>: <message>` (the exception's class unless `kind` is given), exit 1."""
    report_failure(kind or type(error).__name__, error)


def report_failure(kind: str, message: object) -> NoReturn:
    """Prints `error <kind>: <message>` and exits 1."""
    print(f"error {kind}: {one_line(message)}", flush=True)
    exit_now(1)
