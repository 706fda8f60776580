// Library: Apache HttpClient 5.2.1 on HttpCore 5.2.1, Debian bookworm's packages
//   libhttpclient5-java 5.2.1-1 and libhttpcore5-java 5.2.1-1 (with libslf4j-java 1.7.32-1),
//   pinned in tests/conformance/java-debs.txt; tests/conformance/install extracts their
//   jars into target/conformance/java/lib/ (`apt-get download` + `dpkg-deb -x`, nothing
//   installed on the system). Maven is not reachable; Java 17's own HttpClient has no retry.
//   One classic `CloseableHttpClient.execute(...)` per call.
// Configuration:
//   HttpClients.custom().setRetryStrategy(new DefaultHttpRequestRetryStrategy(3,
//   TimeValue.ofSeconds(1))), connect, socket and response timeouts of 10 s
//   (ConnectionConfig, RequestConfig), no proxy from system properties, redirects and
//   automatic retries of the connection manager untouched.
//
// What HttpClient 5.2.1 documents, quoted from its javadoc in the source at the release tag
// (the Debian jars ship no sources or docs): the repository apache/httpcomponents-client,
// tag rel/v5.2.1, file httpclient5/src/main/java/org/apache/hc/client5/http/impl/DefaultHttpRequestRetryStrategy.java
// - Attempts: "@param maxRetries how many times to retry; 0 means no retries" -> 3
//   retries, at most 4 attempts.
// - Statuses: "and retriable HTTP status codes:" "SC_TOO_MANY_REQUESTS (429)"
//   "SC_SERVICE_UNAVAILABLE (503)" (no 500, 502 or 504).
// - Methods: only I/O errors look at the method: "// Retry if the request is considered
//   idempotent"; a 429 or 503 is retried whatever the method, POST included (the code:
//   "return execCount <= this.maxRetries && retriableCodes.contains(response.getCode());"),
//   as long as the body is repeatable (a byte array here). I/O errors of these classes are
//   never retried: InterruptedIOException, UnknownHostException, ConnectException,
//   ConnectionClosedException, NoRouteToHostException, SSLException.
// - Backoff: a fixed interval, no exponential growth and no jitter: "@param
//   defaultRetryInterval the default retry interval between subsequent retries if the
//   {@code Retry-After} header is not set or invalid." -> 1 s, 1 s, 1 s.
// - Retry-After (`getRetryInterval`): seconds ("TimeValue.ofSeconds(Long.parseLong(value))")
//   or an HTTP-date ("DateUtils.parseStandardDate(value)", minus the current time), used
//   when positive ("if (TimeValue.isPositive(retryAfter))"), with no cap.
// - Out of retries: the last response is returned (printed as `status <code>`).
//
// Contract: ../README.md. Run with Java 11 or later in source-file mode, from the
// repository's root (the class path is relative):
//   java -cp 'target/conformance/java/lib/*' tests/conformance/clients/java/HttpClient5Retry.java URL

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.support.ClassicRequestBuilder;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

public class HttpClient5Retry {
    private static final Timeout ATTEMPT_TIMEOUT = Timeout.of(10, TimeUnit.SECONDS);

    public static void main(String[] args) {
        String url = args.length > 0 ? args[0] : System.getenv("RETRYLAB_URL");
        if (url == null || url.isEmpty()) {
            fail("usage", "no URL (argv[1] or RETRYLAB_URL)");
        }
        String method = env("RETRYLAB_METHOD", "GET").toUpperCase();
        byte[] body = new byte[0];
        try {
            if (System.console() == null) {
                body = System.in.readAllBytes();
            }
        } catch (IOException error) {
            fail("stdin", error.getMessage());
        }

        ClassicRequestBuilder builder = ClassicRequestBuilder.create(method).setUri(url)
                .addHeader("x-retrylab-call", env("RETRYLAB_CALL", "0"));
        String key = System.getenv("RETRYLAB_IDEMPOTENCY_KEY");
        String keyHeader = System.getenv("RETRYLAB_IDEMPOTENCY_HEADER");
        if (key != null && keyHeader != null && !key.isEmpty() && !keyHeader.isEmpty()) {
            builder.addHeader(keyHeader, key);
        }
        if (body.length > 0) {
            builder.setEntity(body, ContentType.APPLICATION_OCTET_STREAM);
        }
        ClassicHttpRequest request = builder.build();

        try (CloseableHttpClient client = HttpClients.custom()
                .setRetryStrategy(new DefaultHttpRequestRetryStrategy(3, TimeValue.ofSeconds(1)))
                .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
                        .setDefaultConnectionConfig(ConnectionConfig.custom()
                                .setConnectTimeout(ATTEMPT_TIMEOUT)
                                .setSocketTimeout(ATTEMPT_TIMEOUT)
                                .build())
                        .build())
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setResponseTimeout(ATTEMPT_TIMEOUT)
                        .build())
                .build()) {
            int status = client.execute(request, response -> {
                EntityUtils.consume(response.getEntity());
                return response.getCode();
            });
            System.out.println("status " + status);
            System.out.flush();
            System.exit(status >= 200 && status < 300 ? 0 : 1);
        } catch (IOException error) {
            fail(error.getClass().getSimpleName(), String.valueOf(error.getMessage()));
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    private static void fail(String kind, String message) {
        System.out.println("error " + kind + ": " + message.replaceAll("\\s+", " ").trim());
        System.out.flush();
        System.exit(1);
    }
}
