//! Serde defaults of the client parameters: each is a `fn` for `#[serde(default = ..)]` and
//! an `is_` twin for `skip_serializing_if`, so a scenario written back stays short.

use crate::policy::Jitter;
use crate::scenario::model::duration::Millis;
use crate::scenario::model::values::Probability;

/// Declares `fn name() -> T` and `fn is_name(&T) -> bool` for serde defaults and
/// `skip_serializing_if`.
macro_rules! defaults {
    ($($name:ident, $is:ident: $ty:ty = $value:expr;)*) => {
        $(
            pub(super) fn $name() -> $ty {
                $value
            }
            #[allow(clippy::float_cmp)]
            pub(super) fn $is(v: &$ty) -> bool {
                *v == $value
            }
        )*
    };
}

defaults! {
    ms_100, is_ms_100: Millis = Millis(100);
    s_1, is_s_1: Millis = Millis(1_000);
    s_20, is_s_20: Millis = Millis(20_000);
    s_30, is_s_30: Millis = Millis(30_000);
    s_60, is_s_60: Millis = Millis(60_000);
    s_120, is_s_120: Millis = Millis(120_000);
    ms_10, is_ms_10: Millis = Millis(10);
    ms_0, is_ms_0: Millis = Millis(0);
    two, is_two: f64 = 2.0;
    one_point_six, is_one_point_six: f64 = 1.6;
    jitter_full, is_jitter_full: Jitter = Jitter::Full;
    jitter_none, is_jitter_none: Jitter = Jitter::None;
    tokens_500, is_tokens_500: u32 = 500;
    three, is_three: u32 = 3;
    fraction_01, is_fraction_01: Probability = Probability::new(0.1).unwrap_or_default();
    fraction_02, is_fraction_02: Probability = Probability::new(0.2).unwrap_or_default();
    throttle_codes_default, is_throttle_codes_default: Vec<i64> = vec![530, 42900, 215];
    codes_429, is_codes_429: Vec<u16> = vec![429];
    retry_after_header, is_retry_after_header: String = "Retry-After".to_string();
}

pub(super) fn is_false(v: &bool) -> bool {
    !*v
}
