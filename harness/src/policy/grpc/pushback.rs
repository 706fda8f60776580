//! Server pushback: the `grpc-retry-pushback-ms` response metadata (a trailer, a
//! trailers-only head's header, or a response header in the HTTP/1 model).

use crate::policy::AttemptView;

/// The header that carries pushback.
pub const PUSHBACK_HEADER: &str = "grpc-retry-pushback-ms";

/// What an attempt's pushback says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pushback {
    /// No pushback: the backoff applies.
    Absent,
    /// Retry after exactly this many milliseconds, and restart the backoff.
    After(u64),
    /// Do not retry: a negative, unparsable or repeated value.
    Stop,
}

/// The pushback of `view`, read as grpc-go reads it: one value, a base-10 integer (a sign
/// allowed, nothing else: no spaces, no fraction), non-negative; anything else, or two
/// values, forbids a retry.
pub(super) fn pushback_of(view: &AttemptView) -> Pushback {
    let values: Vec<&str> = view.header_values(PUSHBACK_HEADER).collect();
    match values[..] {
        [] => Pushback::Absent,
        [value] => match value.parse::<i64>().map(u64::try_from) {
            Ok(Ok(ms)) => Pushback::After(ms),
            _ => Pushback::Stop,
        },
        _ => Pushback::Stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Observed;

    fn with(values: &[&str]) -> Pushback {
        let v = values.iter().fold(
            AttemptView::new(1, Observed::Status(200), 0, Some(5), 5),
            |v, value| v.with_header("Grpc-Retry-Pushback-Ms", value),
        );
        pushback_of(&v)
    }

    #[test]
    fn one_non_negative_integer_is_a_delay_anything_else_stops() {
        assert_eq!(with(&[]), Pushback::Absent);
        assert_eq!(with(&["1500"]), Pushback::After(1500));
        assert_eq!(with(&["0"]), Pushback::After(0));
        assert_eq!(with(&["+7"]), Pushback::After(7));
        assert_eq!(with(&["-1"]), Pushback::Stop);
        assert_eq!(with(&["1.5"]), Pushback::Stop);
        assert_eq!(with(&["soon"]), Pushback::Stop);
        assert_eq!(with(&[""]), Pushback::Stop);
        assert_eq!(with(&["99999999999999999999"]), Pushback::Stop);
        assert_eq!(with(&["100", "100"]), Pushback::Stop);
    }
}
