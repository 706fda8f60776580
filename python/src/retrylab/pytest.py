"""The pytest plugin of the retrylab wheel: the ``retrylab`` fixture.

Registered through the ``pytest11`` entry point, so any pytest run in an environment with the
wheel has it (``pytest -p retrylab`` names it explicitly, for example with
``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``)::

    def test_orders_client_honours_retry_after(retrylab):
        with retrylab.serve("scenarios/orders-429.yaml") as served:
            orders.create(base_url=served.url("api"))
        served.assert_passed()

Each ``serve`` runs ``retrylab serve`` in a process group of its own, on ports the system
picks, so tests may run in parallel (pytest-xdist). Every server a test started is stopped
and waited for when the test ends, whatever the test did. A scenario that does not load
fails the test with the CLI's located errors.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, List, Optional, Union

import pytest

from ._served import RetrylabError, ScenarioError, Served, find_binary

__all__ = ["Retrylab", "retrylab"]


class Retrylab:
    """The ``retrylab`` fixture's value: starts served scenarios for one test."""

    def __init__(self, test_file: Optional[Path]) -> None:
        self._test_file = test_file
        self._served: List[Served] = []

    def resolve(self, path: Union[str, "os.PathLike[str]"]) -> Path:
        """A scenario path as the test wrote it: absolute, or relative to the working
        directory, or else to the test file's folder."""
        candidate = Path(path)
        if candidate.is_absolute() or candidate.exists() or self._test_file is None:
            return candidate
        beside = self._test_file.parent / candidate
        return beside if beside.exists() else candidate

    def serve(
        self,
        path: Union[str, "os.PathLike[str]"],
        *,
        calls: Optional[int] = None,
        idle: Optional[str] = None,
        first_request: Optional[str] = None,
        timeout: Optional[str] = None,
    ) -> "_FixtureServed":
        """``with retrylab.serve(path) as served:``, as :func:`retrylab.serve`; a scenario
        that does not load, or a missing CLI, fails the test with the reason."""
        __tracebackhide__ = True
        try:
            served = _FixtureServed(
                self.resolve(path),
                calls=calls,
                idle=idle,
                first_request=first_request,
                timeout=timeout,
            )
        except RetrylabError as error:
            pytest.fail(str(error), pytrace=False)
        self._served.append(served)
        return served

    @staticmethod
    def binary() -> str:
        """The ``retrylab`` executable the fixture runs (see :func:`retrylab.find_binary`)."""
        return find_binary()

    def _stop_all(self) -> None:
        for served in self._served:
            served.stop()


class _FixtureServed(Served):
    """A :class:`Served` whose errors at the start fail the test as the CLI printed them."""

    def start(self) -> "Served":
        __tracebackhide__ = True
        try:
            return super().start()
        except ScenarioError as error:
            pytest.fail(f"the scenario did not load:\n{error}", pytrace=False)
        except RetrylabError as error:
            pytest.fail(str(error), pytrace=False)


@pytest.fixture
def retrylab(request: pytest.FixtureRequest) -> Iterator[Retrylab]:
    """Serves retrylab scenarios to the client under test: ``retrylab.serve(path)``."""
    path = getattr(request, "path", None)
    fixture = Retrylab(Path(path) if path is not None else None)
    try:
        yield fixture
    finally:
        fixture._stop_all()
