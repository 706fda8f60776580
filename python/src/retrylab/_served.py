"""A scenario served by the ``retrylab`` CLI for a client in this process.

Everything judged here is judged by ``retrylab serve --until-eof --format json``: this
module starts it, reads the URLs it prints, closes its standard input when the client is
done, and reads back the JSON it prints (the run as ``retrylab run --format json`` writes
one). It decides nothing about the run itself.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Dict, List, Optional, Type, Union

#: How long serving may take to print its URLs (a cold start on a loaded machine included).
STARTUP_TIMEOUT = 30.0
#: How long serve may take to judge once told the client is done. It waits at most its
#: ``--idle`` for a response still being written, so this is far above what it needs.
JUDGE_TIMEOUT = 60.0
#: How long a stopped server gets after SIGTERM before its group is sent SIGKILL.
KILL_GRACE = 2.0

_INSTALL_HINT = (
    "install the retrylab wheel into this environment (`pip install retrylab-<version>-*.whl`, "
    "built by python/build-wheel), put `retrylab` on PATH (`cargo install retrylab --features "
    "cli`), or set RETRYLAB_BIN to its path"
)


class RetrylabError(Exception):
    """The CLI could not be found or started, or did not behave as documented."""


class ScenarioError(RetrylabError):
    """The scenario did not load: ``message`` holds the CLI's located errors
    (``file:line:col field: message``) as it printed them."""


class ServeFailed(AssertionError):
    """A served run failed one of its verdicts; the message holds the verdicts and the
    timeline, and ``result`` the CLI's JSON."""

    def __init__(self, message: str, result: Dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result


# Shown as `retrylab.ServeFailed` and so on in tracebacks, where users import them from.
for _error in (RetrylabError, ScenarioError, ServeFailed):
    _error.__module__ = "retrylab"


def find_binary() -> str:
    """The ``retrylab`` executable to run.

    ``RETRYLAB_BIN`` when set (an explicit choice wins); else the one in this interpreter's
    scripts folder, where the wheel installs it; else the first on ``PATH``. Raises
    :class:`RetrylabError` saying what to install when there is none.
    """
    explicit = os.environ.get("RETRYLAB_BIN")
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise RetrylabError(
            f"RETRYLAB_BIN={explicit!r} is not an executable file; {_INSTALL_HINT}"
        )
    name = "retrylab.exe" if os.name == "nt" else "retrylab"
    folders = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    for folder in folders:
        if folder:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    on_path = shutil.which("retrylab")
    if on_path:
        return on_path
    raise RetrylabError(f"the `retrylab` executable was not found; {_INSTALL_HINT}")


def _pump(stream: IO[str], into: "queue.Queue[Optional[str]]") -> None:
    """Copies ``stream`` line by line into ``into``, then ``None`` at its end."""
    try:
        for line in stream:
            into.put(line)
    finally:
        into.put(None)


class Served:
    """A scenario being served, then judged: the value of ``with serve(...) as served``.

    Inside the block, :meth:`url` gives each endpoint's URL for the client. Leaving the
    block normally tells the CLI the client is done (its standard input closes) and waits
    for its judgement; leaving it by an exception stops the server instead. After the
    block, :meth:`result` and :meth:`assert_passed` read that judgement.
    """

    def __init__(
        self,
        path: Union[str, "os.PathLike[str]"],
        *,
        calls: Optional[int] = None,
        idle: Optional[str] = None,
        first_request: Optional[str] = None,
        timeout: Optional[str] = None,
        binary: Optional[str] = None,
    ) -> None:
        self.path = Path(path)
        self._argv: List[str] = [
            binary or find_binary(),
            "serve",
            "--until-eof",
            "--format",
            "json",
        ]
        for flag, value in (
            ("--calls", calls),
            ("--idle", idle),
            ("--first-request", first_request),
            ("--timeout", timeout),
        ):
            if value is not None:
                self._argv += [flag, str(value)]
        self._argv.append(str(self.path))
        self._process: Optional["subprocess.Popen[str]"] = None
        self._out: "queue.Queue[Optional[str]]" = queue.Queue()
        self._err: "queue.Queue[Optional[str]]" = queue.Queue()
        self._pumps: List[threading.Thread] = []
        self._urls: Dict[str, str] = {}
        self._result: Optional[Dict[str, Any]] = None
        self._exit: Optional[int] = None

    # --- starting ---------------------------------------------------------------------

    def start(self) -> "Served":
        """Starts serving and returns once every endpoint listens (its URL is known).

        Raises :class:`ScenarioError` with the CLI's located errors when the scenario does
        not load, and :class:`RetrylabError` when the CLI cannot start or prints no URLs in
        time; the process is stopped in every case.
        """
        if self._process is not None:
            raise RetrylabError("this scenario is already being served")
        try:
            self._process = subprocess.Popen(
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                # A process group of its own: stopped as one, with anything it started.
                start_new_session=True,
            )
        except OSError as error:
            raise RetrylabError(f"cannot start {self._argv[0]}: {error}; {_INSTALL_HINT}") from error
        for stream, into in ((self._process.stdout, self._out), (self._process.stderr, self._err)):
            assert stream is not None
            pump = threading.Thread(target=_pump, args=(stream, into), daemon=True)
            pump.start()
            self._pumps.append(pump)
        try:
            self._read_urls()
        except BaseException:
            self.stop()
            raise
        return self

    def _read_urls(self) -> None:
        """Reads ``name url`` lines up to the empty line that ends them."""
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._out.get(timeout=max(left, 0.0))
            except queue.Empty:
                raise RetrylabError(
                    f"`{' '.join(self._argv)}` printed no URLs in {STARTUP_TIMEOUT:.0f}s"
                ) from None
            if line is None:
                # It ended before listening: the scenario did not load, or is not servable.
                code = self._wait(KILL_GRACE)
                errors = self._drain(self._err).strip()
                if code == 2 and errors:
                    raise ScenarioError(errors)
                raise RetrylabError(
                    f"`{' '.join(self._argv)}` exited with {code} before listening: "
                    f"{errors or '(nothing on standard error)'}"
                )
            text = line.rstrip("\n")
            if not text:
                return
            name, _, url = text.partition(" ")
            self._urls[name] = url

    # --- while serving ----------------------------------------------------------------

    def url(self, name: str) -> str:
        """The base URL of endpoint ``name`` (``http://127.0.0.1:<port>``)."""
        try:
            return self._urls[name]
        except KeyError:
            known = ", ".join(sorted(self._urls)) or "none"
            raise KeyError(
                f"{self.path} has no endpoint `{name}` (its endpoints: {known})"
            ) from None

    @property
    def urls(self) -> Dict[str, str]:
        """Every endpoint's name and base URL."""
        return dict(self._urls)

    # --- ending -----------------------------------------------------------------------

    def finish(self) -> Dict[str, Any]:
        """Tells the CLI the client is done and returns its judgement (see :meth:`result`).

        Bounded: a CLI that has not judged within ``JUDGE_TIMEOUT`` is stopped and
        :class:`RetrylabError` raised.
        """
        if self._result is not None:
            return self._result
        process = self._process
        if process is None:
            raise RetrylabError("the scenario was never served: use `with serve(...)`")
        try:
            if process.stdin is not None and not process.stdin.closed:
                try:
                    process.stdin.close()
                except BrokenPipeError:
                    pass  # it had already ended: its exit and output tell why
            code = self._wait(JUDGE_TIMEOUT)
        except BaseException:
            self.stop()
            raise
        if code is None:
            self.stop()
            raise RetrylabError(
                f"`{' '.join(self._argv)}` had not judged {JUDGE_TIMEOUT:.0f}s after the "
                "client was done; it was stopped"
            )
        out = self._drain(self._out)
        errors = self._drain(self._err).strip()
        if code not in (0, 1):
            raise RetrylabError(f"`{' '.join(self._argv)}` exited with {code}: {errors}")
        try:
            result = json.loads(out)
        except ValueError as error:
            raise RetrylabError(
                f"`{' '.join(self._argv)}` printed no JSON ({error}): {out[:2000]!r} {errors}"
            ) from None
        if not isinstance(result, dict):
            raise RetrylabError(f"`{' '.join(self._argv)}` printed {type(result).__name__}")
        self._result = result
        return result

    def stop(self) -> None:
        """Stops serving without a judgement: SIGTERM to the CLI's process group, SIGKILL
        after ``KILL_GRACE``, and waits for it. Safe to call at any time, and again."""
        process = self._process
        if process is None:
            return
        # Signalled only while not yet waited for: until then its pid, and so its group's
        # id, cannot belong to another process. (Serve starts no process in its own group: a
        # command client gets a group of its own, which serve stops itself.)
        if process.poll() is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(process.pid, sig)
                except ProcessLookupError:
                    break
                if self._wait(KILL_GRACE) is not None:
                    break
        self._close_pipes()

    def _wait(self, limit: float) -> Optional[int]:
        """The CLI's exit status, waiting at most ``limit`` seconds; ``None`` if running."""
        process = self._process
        if process is None:
            return None
        try:
            code = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            return None
        self._exit = code
        return code

    def _drain(self, source: "queue.Queue[Optional[str]]") -> str:
        """What a pump has read, up to its stream's end (at most ``KILL_GRACE`` more)."""
        parts: List[str] = []
        deadline = time.monotonic() + KILL_GRACE
        while True:
            try:
                line = source.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                break
            if line is None:
                source.put(None)  # later drains see the end too
                break
            parts.append(line)
        return "".join(parts)

    def _close_pipes(self) -> None:
        process = self._process
        if process is None:
            return
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        for pump in self._pumps:
            pump.join(timeout=KILL_GRACE)

    # --- the judgement ----------------------------------------------------------------

    def result(self) -> Dict[str, Any]:
        """The run as the CLI judged it: the JSON of ``retrylab run --format json`` for one
        run (``name``, ``seed``, ``status``, ``passed``, ``verdicts`` with their
        ``findings``, ``warnings``, ``summary``: the verdicts and the timeline as text,
        ``report``: the same with real instants hidden, ``trace``)."""
        if self._result is None:
            raise RetrylabError(
                "the run is judged when the `with serve(...)` block ends; read it after"
            )
        return self._result

    @property
    def passed(self) -> bool:
        """Whether every verdict passed, as the CLI said."""
        return bool(self.result().get("passed"))

    def failure_message(self) -> str:
        """The CLI's report for people: the verdicts, each call's end and the timeline with
        its real instants (the JSON's ``summary``, as ``retrylab serve`` prints it)."""
        result = self.result()
        return f"retrylab served {self.path}:\n{str(result.get('summary', '')).rstrip()}"

    def assert_passed(self) -> None:
        """Raises :class:`ServeFailed` (an ``AssertionError``) with the verdicts and the
        timeline unless every verdict passed."""
        __tracebackhide__ = True
        if not self.passed:
            raise ServeFailed(self.failure_message(), self.result())

    # --- the context manager ----------------------------------------------------------

    def __enter__(self) -> "Served":
        return self.start()

    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        if kind is None:
            self.finish()
        else:
            self.stop()

    def __del__(self) -> None:
        # A Served dropped while serving (never entered as a context): no process outlives it.
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            self.stop()


def serve(
    path: Union[str, "os.PathLike[str]"],
    *,
    calls: Optional[int] = None,
    idle: Optional[str] = None,
    first_request: Optional[str] = None,
    timeout: Optional[str] = None,
) -> Served:
    """``with serve("orders.yaml") as served:`` serves the scenario on 127.0.0.1 (each
    endpoint on a port the system picks), for a client run inside the block.

    ``calls``, ``idle``, ``first_request`` and ``timeout`` are ``retrylab serve``'s options
    of those names (durations as the CLI writes them: ``"500ms"``, ``"2s"``).
    """
    return Served(path, calls=calls, idle=idle, first_request=first_request, timeout=timeout)
