# Library: botocore 1.44.18, the AWS SDK core for Python (PyPI `botocore==1.44.18`,
#   tests/conformance/requirements.txt): an S3 client, one object operation per call, in
#   botocore's `standard` retry mode.
# Configuration:
#   session.create_client('s3', region_name='us-east-1', endpoint_url=<origin>,
#       aws_access_key_id='retrylab', aws_secret_access_key='retrylab',
#       config=Config(retries={'mode': 'standard', 'total_max_attempts': 4},
#                     connect_timeout=10, read_timeout=10,
#                     s3={'addressing_style': 'path'},
#                     request_checksum_calculation='when_required',
#                     response_checksum_validation='when_required'))
#   The URL's path must be `/<bucket>/<key>` (path-style S3): RETRYLAB_METHOD picks the
#   operation, GET GetObject, HEAD HeadObject, PUT PutObject (stdin is the body), DELETE
#   DeleteObject; another method prints `error usage: ...`. x-retrylab-call and the
#   idempotency key are added to every attempt by a `before-send.s3` event handler
#   (botocore signs its own headers; these two are added after signing). The program sets
#   AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE to /dev/null for itself, so nothing
#   from the machine's ~/.aws changes the configuration.
#
# What botocore 1.44.18 documents, quoted from the docstring of `Config` in
# target/conformance/venv/lib/python3.11/site-packages/botocore/config.py:
# - Attempts: "``total_max_attempts`` -- An integer representing the maximum number of
#   total attempts that will be made on a single request. This includes the initial
#   request, so a value of 1 indicates that no requests will be retried." -> 4 attempts.
#   "``standard`` - The standardized set of retry rules. This is the default mode."
# and from target/conformance/venv/lib/python3.11/site-packages/botocore/retries/standard.py:
# - Statuses: StandardRetryConditions: "not max_attempts and ( transient or throttled or
#   throttling_status or modeled_retry )"; `_TRANSIENT_STATUS_CODES = [500, 502, 503,
#   504]`, error codes RequestTimeout, RequestTimeoutException, PriorRequestNotComplete,
#   connection errors; throttling error codes (Throttling, SlowDown, ...); and
#   ThrottlingStatusCodeChecker: "This covers responses whose error code matches none of
#   the operation's modeled errors, such as a 429 with an empty body or an unknown error
#   code." Every operation and method is retried alike (PUT included).
# - Retry-After: the standard `Retry-After` header is not read (no mention of it in the
#   package); only AWS's own millisecond header: "If the response carries an
#   ``x-amz-retry-after`` header, the delay is raised to that value, capped at ``t_i + 5``
#   seconds."
# - Backoff and jitter: "This class implements truncated binary exponential backoff with
#   jitter:: t_i = rand(0, 1) * min(base_scale * 2 ** i, MAX_BACKOFF)" "where ``i`` is the
#   request attempt (0 based) and ``base_scale`` is 1 second for throttling errors and 50
#   milliseconds otherwise" (MAX_BACKOFF 20 s) -> after a 503: U(0, 50ms), U(0, 100ms),
#   U(0, 200ms); after a throttling 429: U(0, 1s), U(0, 2s), U(0, 4s).
# - S3 only, from target/conformance/venv/lib/python3.11/site-packages/botocore/handlers.py:
#   "# S3 can return a 200 response with an error embedded in the body." A 200 whose body
#   is not XML, or is an XML <Error>, is turned into a 500 and retried ("We need to treat
#   these cases as 500 Service Errors and try again."), for operations whose output is not
#   a streamed payload: PutObject, DeleteObject, HeadObject here, not GetObject. So a
#   scenario's 200 for PUT or DELETE should have an empty (or XML) body.
# - A retry quota (RetryQuotaChecker, `_RETRY_COST = 14` of an initial 500) also limits
#   retries, per client: one call per process never runs it out.
# - Out of attempts: the last error raises a ClientError (printed as `status <code>` of its
#   HTTP status).
#
# Contract: ../README.md. Run with the venv's python:
#   target/conformance/venv/bin/python tests/conformance/clients/python/botocore_s3.py URL

import logging
import os
import urllib.parse

os.environ["AWS_CONFIG_FILE"] = os.devnull
os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"

import botocore.exceptions  # noqa: E402
import botocore.session  # noqa: E402
from botocore.config import Config  # noqa: E402

from _contract import ATTEMPT_TIMEOUT, read_call, report_error, report_failure, report_status  # noqa: E402

OPERATIONS = {
    "GET": "get_object",
    "HEAD": "head_object",
    "PUT": "put_object",
    "DELETE": "delete_object",
}


def main() -> None:
    logging.getLogger("botocore").addHandler(logging.NullHandler())
    call = read_call()
    operation = OPERATIONS.get(call.method.upper())
    path = urllib.parse.urlsplit(call.url).path
    bucket, _, key = path.lstrip("/").partition("/")
    if operation is None or not bucket or not key:
        report_failure(
            "usage",
            f"botocore_s3 needs GET, HEAD, PUT or DELETE on /<bucket>/<key>, "
            f"got {call.method} {path}",
        )
    client = botocore.session.get_session().create_client(
        "s3",
        region_name="us-east-1",
        endpoint_url=call.origin,
        aws_access_key_id="retrylab",
        aws_secret_access_key="retrylab",
        config=Config(
            retries={"mode": "standard", "total_max_attempts": 4},
            connect_timeout=ATTEMPT_TIMEOUT,
            read_timeout=ATTEMPT_TIMEOUT,
            s3={"addressing_style": "path"},
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        ),
    )

    def add_headers(request, **_kwargs):
        for name, value in call.headers.items():
            request.headers[name] = value

    client.meta.events.register("before-send.s3", add_headers)
    params = {"Bucket": bucket, "Key": urllib.parse.unquote(key)}
    if operation == "put_object":
        params["Body"] = call.body
    try:
        response = getattr(client, operation)(**params)
    except botocore.exceptions.ClientError as error:
        report_status(error.response["ResponseMetadata"]["HTTPStatusCode"])
    except botocore.exceptions.BotoCoreError as error:
        report_error(error)
    report_status(response["ResponseMetadata"]["HTTPStatusCode"])


if __name__ == "__main__":
    main()
