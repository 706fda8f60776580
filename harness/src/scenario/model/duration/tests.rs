//! Durations: their forms, limits and messages.

use super::*;

#[test]
fn parses_every_unit() {
    for (text, ms) in [
        ("250ms", 250),
        ("2s", 2000),
        ("1.5s", 1500),
        ("0.1s", 100),
        ("5m", 300_000),
        ("1h", 3_600_000),
        ("1d", 86_400_000),
        ("0", 0),
        ("0ms", 0),
        ("0.5m", 30_000),
    ] {
        assert_eq!(text.parse::<Millis>(), Ok(Millis(ms)), "{text}");
    }
}

#[test]
fn rejects_sub_millisecond_and_malformed() {
    for text in [
        "1.5ms", "0.0001s", "", "7", "ms", "1.s", ".5s", "1..5s", "5 ms", "5S", "-1s", "5x",
        "1e3ms",
    ] {
        assert!(text.parse::<Millis>().is_err(), "{text}");
    }
    assert!("99999999999999999999999999d".parse::<Millis>().is_err());
    assert!(
        "999999999999999999999999999999999999d"
            .parse::<Millis>()
            .is_err()
    );
}

#[test]
fn shortest_form_round_trips() {
    for (ms, text) in [
        (0, "0s"),
        (1, "1ms"),
        (250, "250ms"),
        (1500, "1.5s"),
        (90_000, "90s"),
        (60_000, "1m"),
        (5_400_000, "90m"),
        (86_400_000, "1d"),
        (129_600_000, "36h"),
        (1234, "1234ms"),
    ] {
        assert_eq!(Millis(ms).to_string(), text);
        assert_eq!(text.parse::<Millis>(), Ok(Millis(ms)));
    }
    for ms in (0..5000u64).chain([u64::MAX, u64::MAX - 1, 86_400_001, 3_600_500]) {
        assert_eq!(Millis(ms).to_string().parse::<Millis>(), Ok(Millis(ms)));
    }
}

#[test]
fn offsets() {
    assert_eq!("+30s".parse::<OffsetMillis>(), Ok(OffsetMillis(30_000)));
    assert_eq!("30s".parse::<OffsetMillis>(), Ok(OffsetMillis(30_000)));
    assert_eq!("-5m".parse::<OffsetMillis>(), Ok(OffsetMillis(-300_000)));
    for v in [-1500i64, 0, 1, 30_000, i64::MAX, i64::MIN + 1] {
        let o = OffsetMillis(v);
        assert_eq!(o.to_string().parse::<OffsetMillis>(), Ok(o));
    }
}
