//! `expect.no_attempt_after`: no attempt of a call starts later than the limit after the
//! call started; not judged when the run was cut short or no attempt was made.

use retrylab::prelude::*;
use retrylab::scenario::{LimitsSpec, Millis};

fn verdict<'a>(report: &'a Report, check: &str) -> &'a Verdict {
    report
        .verdicts()
        .iter()
        .find(|v| v.check == check)
        .unwrap_or_else(|| panic!("no `{check}` verdict:\n{}", report.summary()))
}

/// 503s forever, a retry every 400ms, `calls` calls of `attempts` attempts, one after the
/// other.
fn every_400ms(attempts: u32, calls: u32, limit: Millis) -> Scenario {
    Scenario::builder("a retry every 400ms")
        .endpoint("api", endpoint().script([status(503)]))
        .operation(get("api", "/").calls(calls))
        .client(fixed(ms(400)).max_attempts(attempts))
        .expect(expect().no_attempt_after(limit))
        .build()
        .unwrap()
}

#[test]
fn an_attempt_on_the_limit_is_in_time_and_one_after_it_is_not() {
    let report = every_400ms(4, 1, ms(1200)).run_builtin();
    let v = verdict(&report, "no_attempt_after");
    assert_eq!(
        (v.judgement, v.message.as_str()),
        (
            Judgement::Passed,
            "every attempt of every call started within 1.200s of its call's start (4 \
             attempts; the latest, call 0's attempt 4, at 1.200s)"
        )
    );

    let report = every_400ms(5, 1, ms(1199)).run_builtin();
    let v = verdict(&report, "no_attempt_after");
    assert_eq!(
        (v.judgement, v.message.as_str()),
        (
            Judgement::Failed,
            "call 0: attempt 4 started 1.200s after the call started, later than 1.199s (and 1 \
             attempt after it)"
        )
    );
}

#[test]
fn the_limit_counts_from_each_call_s_start() {
    // Three calls of 0.8s each: the last attempt of call 2 starts 2.4s into the run, 0.8s
    // into its call.
    let report = every_400ms(3, 3, ms(800)).run_builtin();
    assert_eq!(
        report.trace().attempts.last().map(|a| a.start_ms),
        Some(2400)
    );
    let v = verdict(&report, "no_attempt_after");
    assert_eq!(v.judgement, Judgement::Passed, "{}", report.summary());

    let report = every_400ms(3, 3, ms(799)).run_builtin();
    let v = verdict(&report, "no_attempt_after");
    assert_eq!(
        v.message,
        "call 0: attempt 3 started 0.800s after the call started, later than 0.799s; call 1: \
         attempt 3 started 0.800s after the call started, later than 0.799s; call 2: attempt 3 \
         started 0.800s after the call started, later than 0.799s"
    );
}

#[test]
fn a_run_cut_short_is_not_judged_unless_an_attempt_was_already_late() {
    let cut_short = |limit| {
        Scenario::builder("cut short")
            .endpoint("api", endpoint().script([status(503)]))
            .operation(get("api", "/"))
            .client(fixed(secs(1)).max_attempts(100))
            .limits(LimitsSpec::default().max_virtual_time(secs(3)))
            .expect(expect().no_attempt_after(limit))
            .build()
            .unwrap()
            .run_builtin()
    };
    // Attempts at 0s, 1s, 2s and 3s, then the limit stops the run: a later one could have
    // come.
    let report = cut_short(secs(10));
    assert_eq!(report.end(), &RunEnd::VirtualTimeLimit);
    let v = verdict(&report, "no_attempt_after");
    assert_eq!(
        (v.judgement, v.message.as_str()),
        (
            Judgement::NotJudged,
            "the run ended early (virtual_time_limit): a call that had not returned could \
             still have made an attempt later than 10.000s"
        )
    );
    // The attempt at 2s was late already: that is a failure whatever came after.
    let report = cut_short(ms(1500));
    let v = verdict(&report, "no_attempt_after");
    assert_eq!(
        (v.judgement, v.message.as_str()),
        (
            Judgement::Failed,
            "call 0: attempt 3 started 2.000s after the call started, later than 1.500s (and 1 \
             attempt after it)"
        )
    );
}

#[test]
fn no_attempt_at_all_is_not_judged() {
    let scenario = Scenario::builder("no request")
        .endpoint("api", endpoint().script([status(200)]))
        .operation(get("api", "/").calls(2))
        .expect(expect().no_attempt_after(secs(1)))
        .build()
        .unwrap();
    let report = scenario.run(|_env| async { Ok::<_, ()>(()) });
    let v = verdict(&report, "no_attempt_after");
    assert_eq!(
        (v.judgement, v.message.as_str()),
        (
            Judgement::NotJudged,
            "no call made an attempt, so no attempt start could be judged"
        )
    );

    // A call without attempts beside one with attempts in time: nothing started late.
    let report = scenario.run(|env: Env| async move {
        if env.call_index() == 0 {
            let response = env.http_client().request(env.operation().request()).await;
            response
                .map(|r| r.status().as_u16())
                .map_err(|e| e.to_string())
        } else {
            Ok(0)
        }
    });
    let v = verdict(&report, "no_attempt_after");
    assert_eq!(v.judgement, Judgement::Passed, "{}", report.summary());
}
