#!/usr/bin/env bash
# Library: curl 7.88.1, the system's (Debian bookworm's package curl 7.88.1-10+deb12u15; not
#   pinned by tests/conformance/install, which prints the version it finds): one
#   `curl --retry 3` per call.
# Configuration:
#   curl --silent --show-error --retry 3 --connect-timeout 10 --max-time 10
#        --request $RETRYLAB_METHOD --header x-retrylab-call:$RETRYLAB_CALL
#        [--header $RETRYLAB_IDEMPOTENCY_HEADER:$RETRYLAB_IDEMPOTENCY_KEY]
#        [--data-binary @<stdin, saved to a file>] --output <a temporary file>
#        --write-out '%{http_code}' URL
#   (not --output /dev/null: before a retry curl truncates its output file, which fails on
#   /dev/null, `curl: (23) Failed to truncate file`, once an answer had a body)
#   without --fail, --retry-delay, --retry-max-time or --retry-all-errors. curl's exit
#   code is not the contract's: this script prints `status <code>` from %{http_code} and
#   exits 0 for a 2xx; when curl itself fails (a timeout, a refused connection: a
#   non-zero exit) it prints `error curl-<exit>: <curl's message>`. On another curl than
#   7.88.1 it says so on stderr.
#
# What curl 7.88.1 documents, quoted from its manual, /usr/share/man/man1/curl.1.gz
# (`--retry <num>`, `--retry-all-errors`, `-m, --max-time`; roff markup left out):
# - Attempts and statuses: "If a transient error is returned when curl tries to perform a
#   transfer, it will retry this number of times before giving up." "Transient error means
#   either: a timeout, an FTP 4xx response code or an HTTP 408, 429, 500, 502, 503 or 504
#   response code." -> 3 retries, at most 4 attempts.
# - Methods: the manual names no method: curl retries a POST like a GET (the body is read
#   from a file, so each retry sends it again). "When --retry is used then curl
#   will retry on some HTTP response codes that indicate transient HTTP errors, but that
#   does not include most 4xx response codes such as 404."
# - Backoff: "When curl is about to retry a transfer, it will first wait one second and
#   then for all forthcoming retries it will double the waiting time until it reaches 10
#   minutes which then will be the delay between the rest of the retries." -> 1 s, 2 s,
#   4 s. No jitter is documented.
# - Retry-After: "Since curl 7.66.0, curl will comply with the Retry-After: response header
#   if one was present to know when to issue the next retry." (The manual does not say
#   whether an HTTP-date is understood, nor whether a Retry-After above the backoff is
#   capped.)
# - Timeout: "If you enable retrying the transfer (--retry) then the maximum time
#   counter is reset each time the transfer is retried." -> 10 s per attempt.
#
# Contract: ../README.md. Run with bash (from anywhere):
#   bash tests/conformance/clients/shell/curl_retry.sh URL
set -uo pipefail

url=${1:-${RETRYLAB_URL:-}}
if [ -z "$url" ]; then
  echo "error usage: no URL (argv[1] or RETRYLAB_URL)"
  exit 1
fi
version=$(curl --version 2>/dev/null | head -n 1 | cut -d' ' -f2)
if [ "$version" != "7.88.1" ]; then
  echo "curl_retry.sh: curl ${version:-(none)}, not the 7.88.1 its header quotes" >&2
fi

# The body, kept in a file: curl sends a file again on each retry. The answer's body goes
# to a file too (see the header).
body=$(mktemp "${TMPDIR:-/tmp}/retrylab-curl.XXXXXX")
output=$(mktemp "${TMPDIR:-/tmp}/retrylab-curl.XXXXXX")
errors=$(mktemp "${TMPDIR:-/tmp}/retrylab-curl.XXXXXX")
trap 'rm -f "$body" "$output" "$errors"' EXIT

args=(--silent --show-error --retry 3 --connect-timeout 10 --max-time 10
  --request "${RETRYLAB_METHOD:-GET}"
  --header "x-retrylab-call: ${RETRYLAB_CALL:-0}"
  --output "$output" --write-out '%{http_code}')
if [ -n "${RETRYLAB_IDEMPOTENCY_KEY:-}" ] && [ -n "${RETRYLAB_IDEMPOTENCY_HEADER:-}" ]; then
  args+=(--header "$RETRYLAB_IDEMPOTENCY_HEADER: $RETRYLAB_IDEMPOTENCY_KEY")
fi
if [ ! -t 0 ]; then
  cat > "$body"
fi
if [ -s "$body" ]; then
  args+=(--data-binary "@$body")
fi

code=$(curl "${args[@]}" "$url" 2> "$errors")
status=$?
if [ "$status" -ne 0 ]; then
  echo "error curl-$status: $(tr '\n' ' ' < "$errors" | sed 's/ *$//')"
  exit 1
fi
echo "status $code"
case "$code" in
  2??) exit 0 ;;
  *) exit 1 ;;
esac
