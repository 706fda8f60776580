//! The wall guard: waiting, stopping and what it says of a run it stopped.

use super::*;

fn pulse(virtual_ms: u64, attempts: u32, polls: u64) -> Pulse {
    Pulse {
        virtual_ms,
        attempts,
        polls,
        thread: None,
    }
}

/// Samples every 50 ms of a run whose pulse at each sample `pulses` gives.
fn sampled(pulses: &[Pulse]) -> Samples {
    let start = Instant::now();
    let mut samples = Samples::new(Duration::from_millis(250));
    for (i, pulse) in pulses.iter().enumerate() {
        samples.push(Sample {
            at: start + Duration::from_millis(50 * i as u64),
            pulse: *pulse,
        });
    }
    samples
}

#[test]
fn virtual_time_passing_is_progress() {
    let pulses: Vec<Pulse> = (0..20).map(|i| pulse(i * 7, i as u32, i * 40)).collect();
    let Stall::Progressing(moving) = sampled(&pulses).stall() else {
        panic!("{:?}", sampled(&pulses).stall());
    };
    assert_eq!((moving.from_ms, moving.to_ms), (14 * 7, 19 * 7));
    assert_eq!((moving.attempts, moving.total), (5, 19));
}

#[test]
fn attempts_at_one_instant_are_retrying_in_place() {
    let pulses: Vec<Pulse> = (0..20).map(|i| pulse(0, i as u32, i * 40)).collect();
    assert!(matches!(
        sampled(&pulses).stall(),
        Stall::RetryingInPlace(_)
    ));
}

#[test]
fn polls_alone_are_polling_in_place() {
    let pulses: Vec<Pulse> = (0..20).map(|i| pulse(5, 1, i * 40)).collect();
    assert!(matches!(sampled(&pulses).stall(), Stall::PollingInPlace(_)));
}

/// Progress that stopped for half the last part or more is a stall, told by whether a
/// poll was under way.
#[test]
fn standing_still_in_a_poll_or_between_polls() {
    let mut pulses: Vec<Pulse> = (0..14).map(|i| pulse(i, i as u32, i * 2)).collect();
    pulses.extend([pulse(14, 14, 29); 6]);
    let Stall::InPoll(held) = sampled(&pulses).stall() else {
        panic!("{:?}", sampled(&pulses).stall());
    };
    assert_eq!(held.still, Duration::from_millis(250));
    assert_eq!((held.at_ms, held.attempts), (14, 14));
    pulses.extend([pulse(14, 14, 30); 6]);
    assert!(matches!(sampled(&pulses).stall(), Stall::Idle(_)));
}

/// Still for a while, but the thread spent it waiting for a CPU: a run that moved in the
/// last part is slow on a loaded machine, not stuck.
#[test]
fn a_descheduled_pause_after_progress_is_progress() {
    let time = |on_cpu_ms: u64, runnable_ms: u64| {
        ThreadTime::for_tests(on_cpu_ms, runnable_ms, (0, on_cpu_ms), false)
    };
    let mut pulses: Vec<Pulse> = (0..17)
        .map(|i| Pulse {
            thread: Some(time(i * 50, 0)),
            ..pulse(i, i as u32, i * 2)
        })
        .collect();
    pulses.extend((17..20).map(|i| Pulse {
        thread: Some(time(800 + (i - 16), (i - 16) * 49)),
        ..pulse(16, 16, 32)
    }));
    assert!(matches!(sampled(&pulses).stall(), Stall::Progressing(_)));
    // The same pause on a CPU is stuck.
    let spinning: Vec<Pulse> = pulses
        .iter()
        .enumerate()
        .map(|(i, p)| Pulse {
            thread: Some(time(i as u64 * 50, 0)),
            ..*p
        })
        .collect();
    assert!(matches!(
        sampled(&spinning).stall(),
        Stall::InPoll(_) | Stall::Idle(_)
    ));
}

#[test]
fn nothing_sampled_is_unseen() {
    assert_eq!(sampled(&[]).stall(), Stall::Unseen);
}

#[test]
fn the_message_says_what_the_thread_did() {
    let held = |on_cpu_ms, waiting_ms, asleep_ms| Held {
        still: Duration::from_secs(1),
        at_ms: 2000,
        attempts: 3,
        spent: Some((
            Duration::from_secs(1),
            Spent {
                on_cpu_ms,
                waiting_ms,
                asleep_ms,
            },
        )),
    };
    let wall = Duration::from_secs(1);
    let slept = explain(wall, &Stall::InPoll(held(2, 8, 990)), false);
    assert!(slept.contains("asleep for 0.990s"), "{slept}");
    assert!(slept.contains("std::thread::sleep"), "{slept}");
    assert!(slept.contains("Rust cannot interrupt"), "{slept}");
    let spun = explain(wall, &Stall::InPoll(held(300, 700, 0)), false);
    assert!(
        spun.contains("busy on a CPU (on a CPU for 0.300s of 1.000s"),
        "{spun}"
    );
    assert!(spun.contains("the machine is loaded"), "{spun}");
    let waited = explain(wall, &Stall::Idle(held(2, 8, 990)), true);
    assert!(waited.contains("spawn_blocking"), "{waited}");
    assert!(waited.contains("The run was stopped there"), "{waited}");
    // A runtime waiting for a blocking task wakes every millisecond for its timers, and
    // on a loaded machine waits for a CPU after each wake: still a wait, not a spin.
    let woken = explain(wall, &Stall::Idle(held(12, 548, 404)), true);
    assert!(woken.contains("outside the simulation"), "{woken}");
}
