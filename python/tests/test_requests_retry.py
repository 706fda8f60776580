"""`requests` with urllib3's `Retry` against a retrylab scenario, through the pytest plugin."""

import pytest
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

ORDERS = "../../docs/examples/orders-429.yaml"  # from this file's folder


def create_order(base_url: str, retry: Retry) -> requests.Response:
    """The client under test: POST /orders through a session that retries with `retry`."""
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    return session.post(f"{base_url}/orders", json={"sku": "s-1"}, timeout=10)


def orders_retry(**overrides: object) -> Retry:
    """Three retries of 429 and 503 for any method, honouring Retry-After unless overridden."""
    settings = dict(total=3, backoff_factor=0.05, status_forcelist=[429, 503],
                    allowed_methods=None, respect_retry_after_header=True, raise_on_status=False)
    settings.update(overrides)
    return Retry(**settings)


def test_requests_honours_retry_after(retrylab):
    with retrylab.serve(ORDERS) as served:
        assert create_order(served.url("api"), orders_retry()).status_code == 201
    served.assert_passed()


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="retries before the Retry-After")
def test_requests_ignoring_retry_after_fails_with_the_timeline(retrylab):
    with retrylab.serve(ORDERS) as served:
        create_order(served.url("api"), orders_retry(respect_retry_after_header=False))
    served.assert_passed()


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="gives up after one retry")
def test_requests_with_too_few_retries_fails(retrylab):
    with retrylab.serve(ORDERS) as served:
        create_order(served.url("api"), orders_retry(total=1))
    served.assert_passed()


def test_the_failure_message_carries_the_verdicts_and_the_timeline(retrylab):
    with retrylab.serve(ORDERS) as served:
        create_order(served.url("api"), orders_retry(respect_retry_after_header=False))
    with pytest.raises(AssertionError) as failed:
        served.assert_passed()
    message = str(failed.value)
    assert "FAIL retry_after" in message, message
    assert "timeline (3 attempts):" in message and "POST /orders  -> 429" in message, message
