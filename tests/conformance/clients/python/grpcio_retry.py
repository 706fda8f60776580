# Library: grpcio 1.85.1 (PyPI `grpcio==1.85.1`, tests/conformance/requirements.txt): the
#   gRPC C core under Python, its retries configured by a service config given as the
#   channel argument `grpc.service_config`; one unary call per logical call, on one
#   channel that every call of the process shares.
# Configuration: ../grpc/service-config.json (the same file the grpc-js program reads):
#   retryPolicy { maxAttempts: 9, initialBackoff: 1s, maxBackoff: 2s, backoffMultiplier: 2,
#   retryableStatusCodes: [UNAVAILABLE] } for the service retrylab.test.v1.Echo, and
#   retryThrottling { maxTokens: 20, tokenRatio: 0.5 }. maxAttempts 9 is on purpose: gRFC A6
#   caps it at 5, and the suite checks that the client does.
#   Channel arguments: grpc.enable_retries 1 (the default, said out loud),
#   grpc.service_config_disable_resolution 1 (the config given here is the one used: no
#   resolver may replace it). Each call has a 20 s deadline (all its attempts).
#
# What grpcio 1.85.1 documents: the wheel ships the C core compiled (grpc/_cython/cygrpc*.so)
# and no retry documentation of its own; Python's `grpc.insecure_channel(target, options)`
# says "options: An optional list of key-value pairs (:term:`channel_arguments` in gRPC
# Core runtime) to configure the channel." The C core's channel arguments name the two used
# here ("grpc.enable_retries", "grpc.service_config", both strings in the .so), and the
# service config's retryPolicy and retryThrottling are gRFC A6's: the profile
# (../../profiles/grpcio.yaml) judges the client against A6 with this config.
# Read in the .so's strings (`strings cygrpc*.so`): "grpc-previous-rpc-attempts",
# "grpc-retry-pushback-ms", "not retrying due to server push-back", "service config:
# clamped retryPolicy.maxAttempts at ".
#
# No stubs: the call is `channel.unary_unary('/retrylab.test.v1.Echo/Say')` with no
# serializers, so it sends and receives raw bytes; the request is a SayRequest
# { text: "call <n>" } encoded by hand (field 1, length-delimited), which is all
# tests/proto/retrylab/test/v1/echo.proto asks.
#
# Calls: RETRYLAB_CALLS of them, one after another (the profile runs the program once per
# run, `per: run`, so that retry throttling, which A6 keeps per channel, sees them all);
# each sends `x-retrylab-call: <n>` as metadata on every attempt.
# Output: one line, `status OK` for one call, or `statuses OK, UNAVAILABLE, ...` for
# several (the gRPC status names); exit 0 when every call ended OK, 1 otherwise.
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/grpcio_retry.py URL

import json
import os
import pathlib
import sys
from urllib.parse import urlsplit

import grpc

from _contract import exit_now, one_line, report_failure

#: The service config, shared with the grpc-js program.
SERVICE_CONFIG = pathlib.Path(__file__).resolve().parent.parent / "grpc" / "service-config.json"

#: The deadline of one call, all its attempts included, in seconds.
CALL_DEADLINE = 20.0


def say_request(text: str) -> bytes:
    """A SayRequest { text } in the protobuf wire format: tag 1, length-delimited."""
    data = text.encode()
    if len(data) > 127:
        raise ValueError("the text of a SayRequest is kept under 128 bytes (one length byte)")
    return b"\x0a" + bytes([len(data)]) + data


def main() -> None:
    url = os.environ.get("RETRYLAB_URL", "")
    if not url:
        report_failure("usage", "no URL (RETRYLAB_URL)")
    parts = urlsplit(url)
    calls = int(os.environ.get("RETRYLAB_CALLS") or "1")
    config = json.dumps(json.loads(SERVICE_CONFIG.read_text()))
    options = [
        ("grpc.service_config", config),
        ("grpc.enable_retries", 1),
        ("grpc.service_config_disable_resolution", 1),
    ]
    statuses = []
    with grpc.insecure_channel(parts.netloc, options=options) as channel:
        say = channel.unary_unary(parts.path)
        for call in range(calls):
            try:
                say(
                    say_request(f"call {call}"),
                    timeout=CALL_DEADLINE,
                    metadata=[("x-retrylab-call", str(call))],
                )
                statuses.append("OK")
            except grpc.RpcError as error:
                statuses.append(error.code().name)
                print(f"call {call}: {error.code().name}: {one_line(error.details())}", file=sys.stderr)
    word = "status" if len(statuses) == 1 else "statuses"
    print(f"{word} {', '.join(statuses)}", flush=True)
    exit_now(0 if all(s == "OK" for s in statuses) else 1)


if __name__ == "__main__":
    main()
