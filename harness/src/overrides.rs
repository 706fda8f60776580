//! Environment overrides, read in one place so that every reader agrees on their meaning.
//!
//! | variable | effect |
//! |---|---|
//! | `RETRYLAB_SEED` | the seed of every run, instead of the scenario's `seed:`; a run with the scenario's snapshot seed compares its usual snapshot, a run with another seed judges the verdicts only and says the snapshot was not compared |
//! | `PROPTEST_CASES` | the cases of every property search (`retrylab::search`, a `search:` block), instead of its own count (set low, it can make a `must_fail` search fail: too few cases to reach the expected failure); proptest's other variables are read by its `Config::default()`, which a search starts from, but change nothing: a search never calls the runner's `run`, its shrinking is bounded by steps rather than time, and failure persistence is off (see `docs/architecture.md#property-search`) |
//!
//! `RETRYLAB_SEED` is read as a whole number from 0 to 2^64 - 1 in decimal digits, the form
//! a failing test prints. Space around it is ignored and a leading `+` is allowed (`" 7 "`
//! and `+7` are seed 7); an empty value, or one of spaces only, sets no override, as if the
//! variable were unset. Anything else is an error naming the variable and its value, never
//! a silent fallback to the scenario's seed: hexadecimal (`0x10`), a sign `-`, separators
//! (`1_000`), a number above 2^64 - 1, several numbers, text that is not UTF-8. `retrylab
//! run` then stops before running anything (exit code 2), a test of
//! [`scenario_main!`](crate::scenario_main) fails with the error, and
//! [`Scenario::run`](crate::Scenario::run) returns a failed report whose `not_runnable`
//! verdict carries it.
//!
//! `PROPTEST_CASES` is read the same way, as a whole number from 1 to 100,000
//! ([`MAX_SEARCH_CASES`](crate::internals::MAX_SEARCH_CASES)); anything else is an error
//! naming the variable and its value, which a search reports before trying any case.
//!
//! insta's own variables (`INSTA_UPDATE`, ...) apply to snapshots as insta documents them.

use std::ffi::OsStr;
use std::fmt;

/// The name of the seed override.
pub const SEED_VAR: &str = "RETRYLAB_SEED";

/// `RETRYLAB_SEED` is set to something that is not a seed.
///
/// ```
/// use retrylab::overrides::SeedOverrideError;
///
/// let e = SeedOverrideError::new("abc");
/// assert_eq!(
///     e.to_string(),
///     "RETRYLAB_SEED=\"abc\": not a seed, expected a whole number from 0 to \
///      18446744073709551615 in decimal digits, such as RETRYLAB_SEED=7"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedOverrideError {
    value: String,
}

impl SeedOverrideError {
    /// The error for the value `value` (as set, or read lossily when it is not UTF-8).
    pub fn new(value: impl Into<String>) -> Self {
        SeedOverrideError {
            value: value.into(),
        }
    }

    /// The value the variable is set to.
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl fmt::Display for SeedOverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{SEED_VAR}=\"{}\": not a seed, expected a whole number from 0 to {} in decimal \
             digits, such as {SEED_VAR}=7",
            crate::scenario::visible(&self.value),
            u64::MAX
        )
    }
}

impl std::error::Error for SeedOverrideError {}

/// The seed `RETRYLAB_SEED` sets: `Ok(None)` when it is unset or empty, an error naming the
/// value when it is not a seed (see the [module](self) for what is read).
///
/// ```
/// // Tests run with the variable unset.
/// assert_eq!(retrylab::overrides::seed(), Ok(None));
/// ```
pub fn seed() -> Result<Option<u64>, SeedOverrideError> {
    match std::env::var_os(SEED_VAR) {
        None => Ok(None),
        Some(value) => parse_seed(&value),
    }
}

/// The name of the search cases override: proptest's own, so that a command line that
/// sets it for proptest tests sets it for searches too.
pub const CASES_VAR: &str = "PROPTEST_CASES";

/// `PROPTEST_CASES` is set to something that is not a count of cases.
///
/// ```
/// use retrylab::overrides::CasesOverrideError;
///
/// assert_eq!(
///     CasesOverrideError::new("0").to_string(),
///     "PROPTEST_CASES=\"0\": not a count of cases, expected a whole number from 1 to \
///      100000 in decimal digits, such as PROPTEST_CASES=256"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CasesOverrideError {
    value: String,
}

impl CasesOverrideError {
    /// The error for the value `value` (as set, or read lossily when it is not UTF-8).
    pub fn new(value: impl Into<String>) -> Self {
        CasesOverrideError {
            value: value.into(),
        }
    }

    /// The value the variable is set to.
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl fmt::Display for CasesOverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{CASES_VAR}=\"{}\": not a count of cases, expected a whole number from 1 to {} \
             in decimal digits, such as {CASES_VAR}=256",
            crate::scenario::visible(&self.value),
            crate::internals::MAX_SEARCH_CASES
        )
    }
}

impl std::error::Error for CasesOverrideError {}

/// The cases `PROPTEST_CASES` sets for every property search: `Ok(None)` when it is unset
/// or empty, an error naming the value when it is not a count from 1 to
/// [`MAX_SEARCH_CASES`](crate::internals::MAX_SEARCH_CASES).
///
/// ```
/// // Tests run with the variable unset.
/// assert_eq!(retrylab::overrides::cases(), Ok(None));
/// ```
pub fn cases() -> Result<Option<u32>, CasesOverrideError> {
    match std::env::var_os(CASES_VAR) {
        None => Ok(None),
        Some(value) => parse_cases(&value),
    }
}

/// `value` read as `PROPTEST_CASES` is: as a seed is, then bounded.
fn parse_cases(value: &OsStr) -> Result<Option<u32>, CasesOverrideError> {
    let lossy = || CasesOverrideError::new(value.to_string_lossy());
    match parse_seed(value) {
        Ok(None) => Ok(None),
        Ok(Some(n)) if (1..=u64::from(crate::internals::MAX_SEARCH_CASES)).contains(&n) => {
            u32::try_from(n).map(Some).map_err(|_| lossy())
        }
        Ok(Some(_)) | Err(_) => Err(lossy()),
    }
}

/// `value` read as `RETRYLAB_SEED` is.
fn parse_seed(value: &OsStr) -> Result<Option<u64>, SeedOverrideError> {
    let Some(text) = value.to_str() else {
        return Err(SeedOverrideError::new(value.to_string_lossy()));
    };
    let digits = text.trim();
    if digits.is_empty() {
        return Ok(None);
    }
    let unsigned = digits.strip_prefix('+').unwrap_or(digits);
    // `u64::from_str` would take a second `+`; only one optional sign, then digits.
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SeedOverrideError::new(text));
    }
    unsigned
        .parse()
        .map(Some)
        .map_err(|_| SeedOverrideError::new(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(value: &str) -> Result<Option<u64>, String> {
        parse_seed(OsStr::new(value)).map_err(|e| e.value().to_owned())
    }

    #[test]
    fn seeds_in_decimal_with_space_and_a_plus_sign() {
        assert_eq!(read("7"), Ok(Some(7)));
        assert_eq!(read(" 7\t\n"), Ok(Some(7)));
        assert_eq!(read("+7"), Ok(Some(7)));
        assert_eq!(read("007"), Ok(Some(7)));
        assert_eq!(read("18446744073709551615"), Ok(Some(u64::MAX)));
    }

    #[test]
    fn cases_are_counts_from_one_to_the_format_limit() {
        let read = |v: &str| parse_cases(OsStr::new(v)).map_err(|e| e.value().to_owned());
        assert_eq!(read("256"), Ok(Some(256)));
        assert_eq!(read(" 1 "), Ok(Some(1)));
        assert_eq!(read("100000"), Ok(Some(100_000)));
        assert_eq!(read(""), Ok(None));
        for bad in ["0", "100001", "-1", "ten", "1e3"] {
            assert_eq!(read(bad), Err(bad.to_owned()), "{bad:?}");
        }
    }

    #[test]
    fn empty_is_no_override() {
        assert_eq!(read(""), Ok(None));
        assert_eq!(read("   "), Ok(None));
    }

    #[test]
    fn anything_else_is_an_error_with_the_value_as_set() {
        for bad in [
            "abc",
            "0x10",
            "0o7",
            "-1",
            "++7",
            "+",
            "1_000",
            "1e3",
            "7 8",
            "18446744073709551616",
            "\u{200b}7",
        ] {
            assert_eq!(read(bad), Err(bad.to_owned()), "{bad:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn text_that_is_not_utf8_is_an_error() {
        use std::os::unix::ffi::OsStrExt;
        let e = parse_seed(OsStr::from_bytes(b"7\xff")).unwrap_err();
        assert_eq!(e.value(), "7\u{fffd}");
    }

    #[test]
    fn invisible_characters_in_the_value_are_shown() {
        let e = SeedOverrideError::new("\u{200b}7");
        assert!(
            e.to_string()
                .starts_with("RETRYLAB_SEED=\"\\u{200b}7\": not a seed")
        );
    }
}
