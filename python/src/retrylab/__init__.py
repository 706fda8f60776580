"""retrylab for Python: the ``retrylab`` CLI (installed by this wheel) and a thin way to
serve a scenario to a client in this process and read the CLI's judgement.

    from retrylab import serve

    with serve("orders-429.yaml") as served:
        create_order(base_url=served.url("api"))
    served.assert_passed()

Under pytest the ``retrylab`` fixture (``retrylab.pytest``, loaded through the ``pytest11``
entry point) does the same and stops every server when the test ends. Every verdict is the
CLI's (``retrylab serve --until-eof --format json``); nothing is judged in Python.
"""

from ._served import (
    RetrylabError,
    ScenarioError,
    ServeFailed,
    Served,
    find_binary,
    serve,
)

__all__ = [
    "RetrylabError",
    "ScenarioError",
    "ServeFailed",
    "Served",
    "find_binary",
    "serve",
]
