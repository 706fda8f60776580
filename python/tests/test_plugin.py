"""What the `retrylab` fixture promises besides the judgement, which is the CLI's."""

import os
import socket
from pathlib import Path

import pytest

import retrylab as retrylab_package

ORDERS = Path(__file__).parents[2] / "docs" / "examples" / "orders-429.yaml"


def post(url: str) -> int:
    """One plain HTTP/1.1 request, no retry: the status line's code."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(b"POST /orders HTTP/1.1\r\nhost: api\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        answer = b""
        while chunk := conn.recv(4096):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def test_result_is_the_cli_json(retrylab):
    with retrylab.serve(ORDERS) as served:
        assert served.url("api").startswith("http://127.0.0.1:")
        codes = [post(served.url("api")) for _ in range(3)]
    assert codes == [429, 503, 201]
    result = served.result()
    assert result["name"] == "an orders client waits out a 429's Retry-After"
    checks = {v["check"]: v["judgement"] for v in result["verdicts"]}
    # Three attempts, but the second came at once: the CLI failed `retry_after`.
    assert checks["attempts"] == "passed" and checks["retry_after"] == "failed", checks
    assert result["passed"] is False and served.passed is False
    assert result["trace"], "the trace is in the JSON"


def test_a_scenario_that_does_not_load_fails_with_its_located_errors(retrylab, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: bad\nendpoints: { api: {} }\n"
                   "operation: { endpoint: api }\nexpect: { atempts: 2 }\n")
    with pytest.raises(pytest.fail.Exception) as failed:
        with retrylab.serve(bad):
            pass
    message = str(failed.value)
    assert f"{bad}:5:" in message and "expect.atempts" in message, message


def test_the_server_is_stopped_when_the_body_raises(retrylab):
    with pytest.raises(RuntimeError, match="the client crashed"):
        with retrylab.serve(ORDERS) as served:
            url = served.url("api")
            raise RuntimeError("the client crashed")
    process = served._process
    assert process is not None and process.poll() is not None, "serve is still running"
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)  # nothing left in its group
    with pytest.raises(OSError):
        post(url)  # nothing listens on its port


def test_a_url_of_no_endpoint_names_the_endpoints(retrylab):
    with retrylab.serve(ORDERS) as served:
        with pytest.raises(KeyError, match="its endpoints: api"):
            served.url("orders")
        post(served.url("api"))


def test_a_missing_binary_says_what_to_install(retrylab, monkeypatch, tmp_path):
    monkeypatch.setenv("RETRYLAB_BIN", str(tmp_path / "no-such-retrylab"))
    with pytest.raises(pytest.fail.Exception, match="install the retrylab wheel"):
        retrylab.serve(ORDERS)


def test_the_binary_is_the_wheels_when_installed():
    found = retrylab_package.find_binary()
    assert os.access(found, os.X_OK), found
    if "RETRYLAB_BIN" not in os.environ:
        import sysconfig
        assert Path(found).parent == Path(sysconfig.get_path("scripts")), found
