//! The real backend: the scenario's endpoints on TCP listeners at 127.0.0.1, in real time.

use std::io::{Read, Write};
use std::time::{Duration, SystemTime};

use retrylab::scenario::BackendKind;
use retrylab::trace::AttemptOutcome;
use retrylab::{RunEnd, Scenario};
use retrylab_tests::listed;

fn scenario(yaml: &str) -> Scenario {
    Scenario::from_yaml_str(yaml, "real.yaml").unwrap_or_else(|e| panic!("{e}"))
}

/// One blocking HTTP/1.1 exchange over a std socket, as a client with its own network
/// stack makes it: the status line, or the IO error that ended the exchange.
fn exchange(url: &str, path: &str) -> std::io::Result<String> {
    let address = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n\r\n"
    )?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let answer = String::from_utf8_lossy(&answer);
    Ok(answer.lines().next().unwrap_or_default().to_owned())
}

/// One blocking exchange like [`exchange`], giving the whole response head, lines in order.
fn exchange_head(url: &str, path: &str) -> std::io::Result<Vec<String>> {
    let address = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n\r\n"
    )?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let answer = String::from_utf8_lossy(&answer);
    let head = answer.split("\r\n\r\n").next().unwrap_or_default();
    Ok(head.split("\r\n").map(str::to_owned).collect())
}

/// The value of header `name` in `head`, as [`exchange_head`] gives it.
fn header<'a>(head: &'a [String], name: &str) -> Option<&'a str> {
    head.iter().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// A scenario whose first answer is a 503 with an HTTP-date `Retry-After` 2s on.
const DATED_503: &str = "version: 1\nname: dated\nbackend: real\n\
     endpoints: { api: { script: [ { status: 503, retry_after: { http_date: +2s } }, \
     { status: 200 } ] } }\n\
     operation: { endpoint: api, path: /orders }\n\
     expect: { attempts: 2, retry_after: { honour: max } }\n";

#[test]
fn on_real_sockets_dates_are_the_real_clock_and_a_client_reading_them_passes() {
    let report = scenario(DATED_503).run(|env| async move {
        let url = env.url("api");
        let head = exchange_head(&url, "/orders").map_err(|e| e.to_string())?;
        let now = SystemTime::now();
        let date = header(&head, "date").ok_or("no Date header")?;
        let date = httpdate::parse_http_date(date).map_err(|e| e.to_string())?;
        let retry_at = header(&head, "retry-after").ok_or("no Retry-After")?;
        let retry_at = httpdate::parse_http_date(retry_at).map_err(|e| e.to_string())?;
        // The server's clock is this machine's: its Date is now, to the second.
        let skew = now.duration_since(date).map_err(|e| e.to_string())?;
        assert!(
            skew < Duration::from_secs(2),
            "Date {skew:?} behind the clock"
        );
        // The date is 2s on, rounded up to a whole second: 2s to 3s after the Date.
        let ahead = retry_at.duration_since(date).map_err(|e| e.to_string())?;
        assert!(
            (Duration::from_secs(2)..=Duration::from_secs(3)).contains(&ahead),
            "{ahead:?}"
        );
        // Wait for the date on this machine's clock, as a real client does.
        std::thread::sleep(
            retry_at
                .duration_since(SystemTime::now())
                .unwrap_or_default(),
        );
        exchange_head(&url, "/orders").map_err(|e| e.to_string())?;
        Ok::<_, String>(())
    });
    report.assert();
    // The header says what the dates were written from; the timeline shows the date sent.
    let trace = report.trace();
    let epoch = trace.header.iter().find(|(key, _)| key == "epoch");
    let (_, epoch) = epoch.unwrap_or_else(|| panic!("{:?}", trace.header));
    assert!(epoch.contains(", the real clock at t=0"), "{epoch}");
    let line = trace.attempt_line(&trace.attempts[0]);
    assert!(line.contains(" GMT"), "{line}");
}

#[test]
fn on_real_sockets_a_client_that_retries_an_http_date_at_once_is_caught() {
    let report = scenario(DATED_503).run(|env| async move {
        let url = env.url("api");
        exchange_head(&url, "/orders").map_err(|e| e.to_string())?;
        exchange_head(&url, "/orders").map_err(|e| e.to_string())?;
        Ok::<_, String>(())
    });
    let verdict = report.verdicts().iter().find(|v| v.check == "retry_after");
    let verdict = verdict.unwrap_or_else(|| panic!("{}", report.summary()));
    assert!(!verdict.passed(), "{}", report.summary());
}

#[test]
fn the_reference_client_retries_over_real_sockets() {
    let s = scenario(
        "version: 1\nname: real burst\nbackend: real\n\
         endpoints: { api: { script: [ { status: 503, times: 2 }, { status: 200 } ] } }\n\
         operation: { endpoint: api }\n\
         client: { fixed: { delay: 100ms, max_attempts: 4 } }\n\
         expect: { attempts: 3, outcome: success, gaps_each: { within: [100ms, 150ms] } }\n",
    );
    let report = s.run_builtin();
    report.assert();
    let trace = report.trace();
    assert_eq!(trace.header[0], ("backend".to_owned(), "real".to_owned()));
    let statuses: Vec<_> = trace.attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(
        statuses,
        [
            AttemptOutcome::Status(503),
            AttemptOutcome::Status(503),
            AttemptOutcome::Status(200)
        ]
    );
    // Real time passed: two delays of 100 ms at least.
    assert!(trace.end_ms >= 200, "{}", trace.end_ms);
}

#[test]
fn a_blocking_client_with_its_own_sockets_is_seen() {
    let s = scenario(
        "version: 1\nname: black box\nbackend: real\n\
         endpoints: { api: { script: [ { status: 503, retry_after: 1 }, { status: 200 } ] } }\n\
         operation: { endpoint: api, path: /orders }\n\
         expect: { attempts: 2 }\n",
    );
    let report = s.run(|env| async move {
        let url = env.url("api");
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        assert_eq!(env.operation().url, format!("{url}/orders"));
        // Blocking the run's thread is fine here: the endpoints serve on their own.
        let first = exchange(&url, "/orders").map_err(|e| e.to_string())?;
        let second = exchange(&url, "/orders").map_err(|e| e.to_string())?;
        Ok::<_, String>(format!("{first} / {second}"))
    });
    report.assert();
    let trace = report.trace();
    assert_eq!(trace.attempts.len(), 2);
    assert!(trace.attempts.iter().all(|a| a.reconstructed));
    assert_eq!(trace.attempts[0].outcome, AttemptOutcome::Status(503));
    assert_eq!(trace.attempts[1].outcome, AttemptOutcome::Status(200));
    assert_eq!(trace.attempts[1].n, 2);
}

#[test]
fn a_reset_step_is_a_connection_reset_for_the_client() {
    let s = scenario(
        "version: 1\nname: reset\nbackend: real\n\
         endpoints: { api: { script: [ { fail: reset }, { fail: close }, { status: 200 } ] } }\n\
         operation: { endpoint: api }\nexpect: { attempts: 3 }\n",
    );
    let report = s.run(|env| async move {
        let url = env.url("api");
        let kinds: Vec<String> = (0..3)
            .map(|_| match exchange(&url, "/") {
                Ok(line) if line.is_empty() => "eof".to_owned(),
                Ok(line) => line,
                Err(e) => format!("{:?}", e.kind()),
            })
            .collect();
        Ok::<_, String>(kinds.join(", "))
    });
    report.assert();
    let calls = &report.trace().calls;
    assert_eq!(
        format!("{:?}", calls[0].result),
        r#"Success("\"ConnectionReset, eof, HTTP/1.1 200 OK\"")"#
    );
}

#[test]
fn what_a_listener_cannot_do_is_a_located_error() {
    let errors = Scenario::from_yaml_str(
        "version: 1\nname: x\nbackend: real\n\
         endpoints: { api: { connect: [ { action: refuse } ] } }\n\
         operation: { endpoint: api }\n\
         network: { latency: 5ms, faults: [ { at: 1s, partition: api, for: 1s } ] }\n",
        "x.yaml",
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(errors.contains("x.yaml:4:"), "{errors}");
    assert!(
        errors.contains("refused and black-holed connections cannot be made on the real backend"),
        "{errors}"
    );
    assert!(
        errors.contains("network.latency: the sim network's latency cannot be made"),
        "{errors}"
    );
    assert!(
        errors.contains("network.faults: partitions and crashes"),
        "{errors}"
    );
}

#[test]
fn a_hanging_client_is_stopped_by_the_time_limit() {
    let s = scenario(
        "version: 1\nname: hang\nbackend: real\n\
         endpoints: { api: { script: [ { fail: hang } ] } }\n\
         operation: { endpoint: api }\nlimits: { max_virtual_time: 300ms }\n",
    );
    let report = s.run_builtin();
    assert_eq!(report.end(), &RunEnd::VirtualTimeLimit);
}

/// A served client's calls are read off its requests: by the pauses between them when they
/// carry no call tag, by the tag when they do.
#[test]
fn served_calls_are_told_apart_by_pauses_or_tags() {
    use retrylab::ServeOptions;

    let s = scenario(
        "version: 1\nname: served calls\n\
         endpoints: { api: { script: [ { status: 503 }, { status: 200 }, { status: 503 }, { status: 200 } ] } }\n\
         operation: { endpoint: api, calls: 2 }\nexpect: { attempts: 2, outcome: success }\n",
    );
    for tagged in [false, true] {
        let options = ServeOptions::new().idle(Duration::from_millis(700));
        let report = s.serve(options, move |endpoints| {
            let address = endpoints[0].url.trim_start_matches("http://").to_owned();
            std::thread::spawn(move || {
                for (i, pause) in [0, 0, 300, 0].into_iter().enumerate() {
                    std::thread::sleep(Duration::from_millis(pause));
                    let mut stream = std::net::TcpStream::connect(&address).unwrap();
                    let tag = if tagged {
                        format!("x-retrylab-call: {}\r\n", i / 2)
                    } else {
                        String::new()
                    };
                    write!(
                        stream,
                        "GET / HTTP/1.1\r\nhost: api\r\n{tag}connection: close\r\n\r\n"
                    )
                    .unwrap();
                    stream.read_to_end(&mut Vec::new()).unwrap();
                }
            });
        });
        report.assert();
        let trace = report.trace();
        assert_eq!(trace.calls.len(), 2, "tagged: {tagged}");
        let calls: Vec<u32> = trace.attempts.iter().map(|a| a.call_id).collect();
        assert_eq!(calls, [0, 0, 1, 1], "tagged: {tagged}");
    }
}

/// Real instants and ports differ from run to run; the snapshot of a real-backend run does
/// not, and no answer carries a real `Date` header.
#[test]
fn a_real_backend_snapshot_is_the_same_on_every_run() {
    let s = scenario(
        "version: 1\nname: real snapshot\nbackend: real\n\
         endpoints: { api: { script: [ { status: 503, retry_after: 1 }, { fail: reset }, { status: 200 } ] } }\n\
         operation: { endpoint: api }\n\
         client: { fixed: { delay: 50ms, max_attempts: 4 } }\nexpect: { attempts: 3 }\n",
    );
    let texts: Vec<String> = (0..2)
        .map(|_| {
            let report = s.run_builtin();
            report.assert();
            report.snapshot_text()
        })
        .collect();
    assert_eq!(texts[0], texts[1]);
    assert!(texts[0].contains("backend: real"), "{}", texts[0]);
    assert!(!texts[0].contains("t=0."), "{}", texts[0]);

    // Unlike the sim network's, a real endpoint's answers carry a `Date`, from the real clock.
    let head = scenario(
        "version: 1\nname: dated\nbackend: real\n\
         endpoints: { api: { script: [ { status: 200 } ] } }\noperation: { endpoint: api }\n",
    )
    .run(|env| async move {
        let address = env.url("api").replace("http://", "");
        let mut stream = std::net::TcpStream::connect(address).map_err(|e| e.to_string())?;
        stream
            .write_all(b"GET / HTTP/1.1\r\nhost: api\r\nconnection: close\r\n\r\n")
            .map_err(|e| e.to_string())?;
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(answer.to_ascii_lowercase())
    });
    let answer = format!("{:?}", head.trace().calls[0].result);
    assert!(answer.contains("200 ok"), "{answer}");
    let now = httpdate::fmt_http_date(SystemTime::now()).to_ascii_lowercase();
    // The day and the hour are the machine's (the test may straddle a second, not an hour
    // but for one second in 3600).
    let day_and_hour = &now[..now.len() - 10];
    assert!(
        answer.contains(&format!("date: {day_and_hour}")),
        "{answer} / {now}"
    );
}

// ---- library files on real sockets ----------------------------------------------------------

#[test]
fn the_listed_library_files_pass_on_real_sockets() {
    let files = listed::files("real_backend.txt");
    assert!(files.len() >= 8, "{} files listed", files.len());
    let failed: Vec<String> = files
        .iter()
        .map(|file| (file, listed::run_on(file, BackendKind::Real)))
        .filter(|(_, report)| !report.passed())
        .map(|(file, report)| format!("{file}:\n{}", report.summary()))
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} files failed on the real backend:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}

/// How often the list passes on real sockets, for the release note: every file, 20 times in
/// a row. Run it on a loaded machine:
/// `cargo test -p retrylab-tests --test real_backend -- --ignored --nocapture`.
#[test]
#[ignore = "runs the list 20 times in real time (several minutes); prints its pass rate"]
fn the_listed_library_files_20_times_in_a_row() {
    const ROUNDS: usize = 20;
    let files = listed::files("real_backend.txt");
    let mut passed = vec![0_usize; files.len()];
    let mut first_failure: Vec<Option<String>> = vec![None; files.len()];
    for _ in 0..ROUNDS {
        for (i, file) in files.iter().enumerate() {
            let report = listed::run_on(file, BackendKind::Real);
            // Each run completes: the figure is about timing, not about runs that broke.
            assert_eq!(report.end(), &RunEnd::Completed, "{}", report.summary());
            if report.passed() {
                passed[i] += 1;
            } else if first_failure[i].is_none() {
                first_failure[i] = Some(report.summary());
            }
        }
    }
    let total: usize = passed.iter().sum();
    println!(
        "{total} of {} runs passed ({} files x {ROUNDS} rounds):",
        files.len() * ROUNDS,
        files.len()
    );
    for ((file, passed), failure) in files.iter().zip(&passed).zip(&first_failure) {
        println!("  {passed:>2}/{ROUNDS}  {file}");
        if let Some(failure) = failure {
            println!("        first failure:\n{failure}");
        }
    }
    assert_eq!(
        total,
        files.len() * ROUNDS,
        "not every run passed: see above"
    );
}

/// A client that never comes: serving gives up at its timeout, and says so in its own words.
#[test]
fn serving_gives_up_at_its_timeout() {
    use retrylab::ServeOptions;

    let s = scenario(
        "version: 1\nname: nobody\nendpoints: { api: {} }\noperation: { endpoint: api }\n",
    );
    let options = ServeOptions::new().timeout(Duration::from_millis(300));
    let report = s.serve(options, |_| {});
    assert_eq!(report.end(), &RunEnd::VirtualTimeLimit);
    let checks: Vec<&str> = report.failures().map(|v| v.check.as_str()).collect();
    assert_eq!(checks[0], "serving_timeout");
    let messages: Vec<&str> = report.failures().map(|v| v.message.as_str()).collect();
    assert_eq!(
        messages[0],
        "the client had not finished after the serving timeout (0.300s): 0 request(s) \
         arrived, and serving waits for requests of 1 call(s) followed by 2.000s without any"
    );
}

/// A file's own `limits.wall` bounds serving as it bounds a run (serve ignored it, and waited
/// its 10-minute default for a client that never came).
#[test]
fn serving_ends_at_the_files_wall_limit() {
    use retrylab::ServeOptions;

    let s = scenario(
        "version: 1\nname: nobody\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
         limits: { wall: 1s }\n",
    );
    let report = s.serve(ServeOptions::new(), |_| {});
    let failed: Vec<(&str, &str)> = report
        .failures()
        .map(|v| (v.check.as_str(), v.message.as_str()))
        .collect();
    assert_eq!(failed[0].0, "serving_timeout");
    assert!(
        failed[0]
            .1
            .starts_with("the client had not finished after the scenario's limits.wall (1.000s)"),
        "{failed:?}"
    );
}
