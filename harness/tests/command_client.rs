//! Command clients (`client: { command: [...] }`): a program run once per call on real
//! sockets, its exit the call's result, its output kept; and every way a program can go
//! wrong (missing, not executable, silent, hung, forking, loud) a clear verdict that leaves
//! no process and no port behind.

use std::path::PathBuf;

use retrylab::{ProcessExit, Report, Scenario};

/// A scenario of one endpoint answering `script`, run by `client` (YAML under `client:`).
fn scenario(name: &str, script: &str, client: &str, expect: &str) -> Scenario {
    let yaml = format!(
        "version: 1\nname: {name}\nendpoints: {{ api: {{ script: {script} }} }}\n\
         operation: {{ endpoint: api, path: /orders }}\nclient:\n{client}\nexpect: {expect}\n\
         limits: {{ wall: 30s }}\n"
    );
    Scenario::from_yaml_str(&yaml, &format!("{name}.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The `client_process` verdict's message, which must have failed.
fn process_failure(report: &Report) -> String {
    let verdict = report
        .failures()
        .find(|v| v.check == "client_process")
        .unwrap_or_else(|| panic!("no client_process failure:\n{}", report.summary()));
    verdict.message.clone()
}

/// Whether a process whose command line holds `token` is still alive.
fn alive(token: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .map(|line| String::from_utf8_lossy(&line).contains(token))
            .unwrap_or(false)
    })
}

/// Whether anything still listens at the address of `url` (`http://127.0.0.1:<port>/...`).
fn listening(url: &str) -> bool {
    let address = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default();
    std::net::TcpStream::connect(address).is_ok()
}

/// The URL the run gave its first process (its last argument).
fn url_given(report: &Report) -> String {
    report.processes()[0]
        .argv
        .last()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_program_per_call_gets_the_url_the_environment_and_the_body() {
    let script = "[ { status: 503 }, { status: 200, body: ok } ]";
    // The shell prints what it was given, then calls twice with curl-free /dev/tcp-less means:
    // python3, which every machine running this suite has.
    let client = "  command: [python3, -c, \"import os,sys,urllib.request as u\\n\
                  body=sys.stdin.read()\\n\
                  print(os.environ['RETRYLAB_METHOD'], os.environ['RETRYLAB_CALL'], body)\\n\
                  for n in range(2):\\n\
                  \\x20 try: print(u.urlopen(u.Request(sys.argv[1], data=body.encode() or None)).status)\\n\
                  \\x20 except Exception as e: print(e)\\n\", \"{url}\"]";
    let mut s = scenario(
        "per call",
        script,
        client,
        "{ outcome: success, attempts: 2 }",
    );
    s.operation.method = "POST".into();
    s.operation.body = Some("{\"id\":1}".into());
    let report = s.run_builtin();
    assert!(report.passed(), "{}", report.summary());
    let process = &report.processes()[0];
    assert_eq!(process.exit, ProcessExit::Code(0));
    assert_eq!(process.call, Some(0));
    assert_eq!(process.requests, 2);
    let lines: Vec<&str> = process.stdout.text.lines().collect();
    assert_eq!(lines[0], "POST 0 {\"id\":1}");
    assert!(lines[1].contains("503"), "{lines:?}");
    assert_eq!(lines[2], "200");
    assert!(url_given(&report).starts_with("http://127.0.0.1:"));
    assert!(url_given(&report).ends_with("/orders"));
    let verdict = report
        .verdicts()
        .iter()
        .find(|v| v.check == "client_process");
    assert!(verdict.is_some_and(|v| v.passed()), "{}", report.summary());
}

#[test]
fn a_missing_program_is_named() {
    let client = "  command: [retrylab-no-such-client, \"{url}\"]";
    let report = scenario(
        "missing",
        "[ { status: 200 } ]",
        client,
        "{ outcome: success }",
    )
    .run_builtin();
    let message = process_failure(&report);
    assert!(
        message.contains("`retrylab-no-such-client` is not on this machine"),
        "{message}"
    );
    assert!(!listening(&url_given(&report)));
}

#[test]
fn a_file_that_is_not_executable_is_named() {
    let dir = std::env::temp_dir().join(format!("retrylab-noexec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let file: PathBuf = dir.join("client.sh");
    std::fs::write(&file, "#!/bin/sh\nexit 0\n").unwrap_or_else(|e| panic!("{e}"));
    let client = format!("  command: [{}, \"{{url}}\"]", file.display());
    let report = scenario(
        "noexec",
        "[ { status: 200 } ]",
        &client,
        "{ outcome: success }",
    )
    .run_builtin();
    let _ = std::fs::remove_dir_all(&dir);
    let message = process_failure(&report);
    assert!(message.contains("is not executable"), "{message}");
}

#[test]
fn a_program_that_never_sends_is_killed_at_its_timeout() {
    let client = "  command: [sleep, \"4242\"]\n  timeout: 500ms";
    let report = scenario(
        "silent",
        "[ { status: 200 } ]",
        client,
        "{ outcome: success }",
    )
    .run_builtin();
    let message = process_failure(&report);
    assert!(
        message.contains("still running at its `timeout` and killed"),
        "{message}"
    );
    assert_eq!(
        report.processes()[0].exit,
        ProcessExit::TimedOut { after_ms: 500 }
    );
    assert!(!alive("4242"), "the program is still running");
}

#[test]
fn a_program_that_exits_before_any_request_is_quoted() {
    let client = "  command: [sh, -c, \"echo 'usage: client URL' >&2; exit 2\"]";
    let report = scenario(
        "usage",
        "[ { status: 200 } ]",
        client,
        "{ outcome: success }",
    )
    .run_builtin();
    let message = process_failure(&report);
    assert!(
        message.contains("ended (exit 2) before sending any request"),
        "{message}"
    );
    assert!(message.contains("usage: client URL"), "{message}");
}

#[test]
fn a_program_that_leaves_a_child_fails_and_the_child_is_killed() {
    let client = "  command: [python3, -c, \"import subprocess,sys,urllib.request as u\\n\
                  u.urlopen(sys.argv[1]).read()\\n\
                  subprocess.Popen(['sleep', '4343'])\\n\", \"{url}\"]";
    let report = scenario(
        "forks",
        "[ { status: 200 } ]",
        client,
        "{ outcome: success }",
    )
    .run_builtin();
    let message = process_failure(&report);
    assert!(
        message.contains("leaving processes of its group running"),
        "{message}"
    );
    assert!(report.processes()[0].left_children);
    assert!(!alive("4343"), "the child is still running");
    assert!(!listening(&url_given(&report)));
}

#[test]
fn a_program_that_prints_100_mb_keeps_64_kib_of_it() {
    let client = "  command: [python3, -c, \"import sys,urllib.request as u\\n\
                  u.urlopen(sys.argv[1]).read()\\n\
                  sys.stdout.write('x' * 100_000_000)\\n\", \"{url}\"]";
    let report = scenario(
        "loud",
        "[ { status: 200 } ]",
        client,
        "{ outcome: success }",
    )
    .run_builtin();
    assert!(report.passed(), "{}", report.summary());
    let stdout = &report.processes()[0].stdout;
    assert_eq!(stdout.text.len(), 64 * 1024);
    assert_eq!(stdout.cut_bytes, 100_000_000 - 64 * 1024);
    assert!(stdout.shown().ends_with("more bytes cut]\n"));
}

#[test]
fn a_command_on_the_sim_backend_is_a_located_error() {
    let yaml = "version: 1\nname: x\nbackend: sim\nendpoints: { api: {} }\n\
                operation: { endpoint: api }\nclient: { command: [curl, '{url}'] }\n";
    let error = Scenario::from_yaml_str(yaml, "x.yaml")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("x.yaml:3:10 backend: a command client runs on real sockets"),
        "{error}"
    );
    let yaml = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
                client: { command: [curl, '{url:nope}', '{bogus}'], per: run, env: { RETRYLAB_X: y } }\n";
    let error = Scenario::from_yaml_str(yaml, "x.yaml")
        .unwrap_err()
        .to_string();
    assert!(error.contains("`{url:nope}` names no endpoint"), "{error}");
    assert!(error.contains("unknown placeholder `{bogus}`"), "{error}");
    assert!(error.contains("`RETRYLAB_X` is set by retrylab"), "{error}");
}

#[test]
fn one_process_for_the_run_makes_every_call() {
    let client = "  command: [python3, -c, \"import os,sys,urllib.request as u\\n\
                  for n in range(int(os.environ['RETRYLAB_CALLS'])):\\n\
                  \\x20 u.urlopen(u.Request(sys.argv[1], headers={{'x-retrylab-call': str(n)}})).read()\\n\", \"{url}\"]\n  per: run";
    let mut s = scenario(
        "per run",
        "[ { status: 200 } ]",
        client,
        "{ outcome: success, attempts: 1 }",
    );
    s.operation.calls = 3;
    let report = s.run_builtin();
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(report.processes().len(), 1);
    assert_eq!(report.processes()[0].call, None);
    assert_eq!(report.trace().calls.len(), 3);
}

/// A program that POSTs to a gRPC endpoint twice, 200ms apart, over h2c with curl, whatever
/// the answers: `conforms_to: grpc_retry` must read each attempt's gRPC status from the
/// trace (a command's requests carry no attempt tag, so no scripted answer is matched), not
/// the HTTP 200 a trailers-only answer travels in.
fn grpc_twice(first: &str) -> Option<Report> {
    let curl = std::process::Command::new("curl").arg("--version").output();
    if !curl.is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("HTTP2")) {
        eprintln!("skipped: no curl with HTTP/2 here");
        return None;
    }
    let yaml = format!(
        "version: 1\nname: grpc twice\nendpoints:\n  api:\n    protocol: http2\n\
         \x20   script: [ {{ grpc: {first} }}, {{ grpc: ok }} ]\n\
         operation: {{ endpoint: api, method: POST, path: /echo.v1.Echo/Say }}\n\
         client:\n  command: [sh, -c, 'for n in 1 2; do curl -s --http2-prior-knowledge \
         -X POST -H \"content-type: application/grpc\" --data-binary \"\" -o /dev/null \"$0\"; \
         [ $n = 1 ] && sleep 0.2; done', '{{url}}']\n\
         expect:\n  conforms_to:\n    grpc_retry:\n      service_config:\n        \
         retryPolicy: {{ maxAttempts: 2, initialBackoff: 0.2s, maxBackoff: 1s, \
         backoffMultiplier: 2, retryableStatusCodes: [UNAVAILABLE] }}\n\
         tolerance: 400ms\nlimits: {{ wall: 30s }}\n"
    );
    let s = Scenario::from_yaml_str(&yaml, "grpc-twice.yaml").unwrap_or_else(|e| panic!("{e}"));
    Some(s.run_builtin())
}

#[test]
fn a_commands_grpc_answers_are_judged_by_their_grpc_status() {
    // UNAVAILABLE is retryable: the second attempt is the retry grpc_retry makes.
    let Some(report) = grpc_twice("unavailable") else {
        return;
    };
    assert!(report.passed(), "{}", report.summary());
    assert_eq!(report.trace().attempts.len(), 2);
    // INTERNAL is not: the second attempt is one grpc_retry would not make.
    let Some(report) = grpc_twice("internal") else {
        return;
    };
    let failed: Vec<&str> = report.failures().map(|v| v.check.as_str()).collect();
    assert_eq!(failed, ["conforms_to"], "{}", report.summary());
}
