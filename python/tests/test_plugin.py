"""What the `retrylab` fixture promises besides the judgement, which is the CLI's."""

import os
import signal
import socket
import time
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


def test_a_command_client_serve_started_is_stopped_when_the_body_raises(retrylab, tmp_path):
    # The client runs in a process group of its own, which a signal to serve's group misses:
    # serve kills it when it gets SIGTERM.
    scenario = tmp_path / "long-client.yaml"
    scenario.write_text(
        "version: 1\nname: long-client\n"
        "endpoints: { api: { script: [ { status: 200 } ] } }\n"
        "operation: { endpoint: api }\n"
        "client:\n"
        "  command: [sh, -c, 'sleep 60 & echo $! > pid.tmp && mv pid.tmp pid; wait']\n"
        "  cwd: .\n"
        "  timeout: 120s\n"
        "expect: { attempts: 1, outcome: success }\n")
    pid_file = tmp_path / "pid"
    with pytest.raises(RuntimeError, match="the test body failed"):
        with retrylab.serve(scenario):
            for _ in range(600):  # bounded: 30 s
                if pid_file.exists():
                    break
                time.sleep(0.05)
            assert pid_file.exists(), "the client did not start within 30 s"
            pid = int(pid_file.read_text())
            # Checked alive first, so that "gone" below cannot pass where /proc is unreadable.
            assert alive(pid), f"the client's child {pid} is not running"
            raise RuntimeError("the test body failed")
    for _ in range(200):  # bounded: 10 s for the kill to land and the orphan to be reaped
        if not alive(pid):
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"the client's child {pid} outlived serve")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(") ", 1)[1][:1] not in ("Z", "X")


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
