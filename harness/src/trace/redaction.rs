//! Redaction of real time in snapshot text: a run on the real backend measures its instants
//! in real milliseconds and listens on ports the OS picks, so its snapshot shows neither, and
//! is byte-identical from run to run while still showing attempts, statuses, outcomes,
//! connection reuse and effects.
//!
//! A simulated run's instants are exact and deterministic, and render as they are. The human
//! and JSON reports always keep the real instants: only the snapshot redacts.

use super::instants::REAL;

/// What a redacted port reads as.
pub(crate) const PORT: &str = "[port]";

/// The hosts whose ports are redacted: the real backend listens on 127.0.0.1 only, and a
/// client may name it `localhost`.
const LOCAL_HOSTS: [&str; 2] = ["127.0.0.1:", "localhost:"];

/// `text` with every duration written as the timeline writes one (`1.234s`: digits, a point,
/// three digits and `s`, standing alone) replaced by [`REAL`]. A verdict's message cannot tell
/// a measured duration from a bound it prints, so both go.
pub(crate) fn durations(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !is_word(bytes[i - 1]);
        if starts_word && bytes[i].is_ascii_digit() {
            let whole = digits(bytes, i);
            let fraction = digits(bytes, whole + 1);
            let is_duration = bytes.get(whole) == Some(&b'.')
                && fraction == whole + 4
                && bytes.get(fraction) == Some(&b's')
                && bytes.get(fraction + 1).is_none_or(|&b| !is_word(b));
            if is_duration {
                out.push_str(&text[copied..i]);
                out.push_str(REAL);
                copied = fraction + 1;
                i = copied;
                continue;
            }
            i = whole;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// `text` with the port of every `127.0.0.1:<port>` and `localhost:<port>` replaced by
/// [`PORT`].
pub(crate) fn ports(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let host = LOCAL_HOSTS
            .iter()
            .find(|host| bytes[i..].starts_with(host.as_bytes()));
        if let Some(host) = host {
            let port_start = i + host.len();
            let port_end = digits(bytes, port_start);
            if port_end > port_start {
                out.push_str(&text[copied..port_start]);
                out.push_str(PORT);
                copied = port_end;
            }
            i = port_end;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// The end of the run of ASCII digits that starts at `from`.
fn digits(bytes: &[u8], from: usize) -> usize {
    let mut end = from;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    end
}

/// Whether `b` continues a word or a number: a duration glued to one is not a duration.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Trace;
    use crate::trace::instants::Instants;

    #[test]
    fn durations_go_and_other_numbers_stay() {
        assert_eq!(
            durations("call 0: attempt 2 started 0.913s after attempt 1 ended, expected >= 1.000s"),
            "call 0: attempt 2 started [real] after attempt 1 ended, expected >= [real]"
        );
        assert_eq!(durations("1.000s"), "[real]");
        assert_eq!(durations("(12.345s)"), "([real])");
        // Not the timeline's form: kept.
        for kept in [
            "50ms tolerance",
            "1.5s",
            "1.0000s",
            "v1.000s",
            "1.000ms",
            "1.000s2",
            "3 attempts",
            "rate 1.500/s",
            "2026-01-01",
        ] {
            assert_eq!(durations(kept), kept);
        }
        assert_eq!(durations("é 1.000s ü"), "é [real] ü");
    }

    #[test]
    fn local_ports_go_and_other_text_stays() {
        assert_eq!(
            ports("error sending request for url (http://127.0.0.1:38211/orders)"),
            "error sending request for url (http://127.0.0.1:[port]/orders)"
        );
        assert_eq!(
            ports("localhost:8080 and 127.0.0.1:1"),
            "localhost:[port] and 127.0.0.1:[port]"
        );
        for kept in ["127.0.0.1: no port", "10.0.0.1:80", "api:80", "127.0.0.1"] {
            assert_eq!(ports(kept), kept);
        }
    }

    #[test]
    fn only_a_real_trace_is_redacted() {
        let mut trace = Trace::default();
        assert_eq!(Instants::of(&trace), Instants::Exact);
        trace.header.push(("backend".to_owned(), "sim".to_owned()));
        assert_eq!(Instants::of(&trace).show(1234), "1.234s");
        trace.header[0].1 = "real".to_owned();
        assert_eq!(Instants::of(&trace).show(1234), "[real]");
    }
}
