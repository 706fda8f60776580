//! HTTP/2 error codes (RFC 9113 section 7), by the names a scenario writes them in: h2's
//! `Reason` constants in snake case (`refused_stream`, `enhance_your_calm`).

use std::fmt;

/// An HTTP/2 error code, as carried by `RST_STREAM` and `GOAWAY`.
///
/// ```
/// use retrylab_endpoints::H2Code;
/// assert_eq!(H2Code::from_name("refused_stream"), Some(H2Code::REFUSED_STREAM));
/// assert_eq!(H2Code::REFUSED_STREAM.to_string(), "refused_stream");
/// assert_eq!(H2Code(0x42).to_string(), "0x42");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct H2Code(pub u32);

/// The names of the codes RFC 9113 defines, each at the index of its code (0x0 to 0xd): the
/// ones a scenario may write.
const NAMES: [&str; 14] = [
    "no_error",
    "protocol_error",
    "internal_error",
    "flow_control_error",
    "settings_timeout",
    "stream_closed",
    "frame_size_error",
    "refused_stream",
    "cancel",
    "compression_error",
    "connect_error",
    "enhance_your_calm",
    "inadequate_security",
    "http_1_1_required",
];

impl H2Code {
    /// `NO_ERROR`: a graceful GOAWAY's code.
    pub const NO_ERROR: H2Code = H2Code(0x0);
    /// `INTERNAL_ERROR`.
    pub const INTERNAL_ERROR: H2Code = H2Code(0x2);
    /// `REFUSED_STREAM`: the stream was not processed, so it is safe to retry (RFC 9113
    /// section 8.7).
    pub const REFUSED_STREAM: H2Code = H2Code(0x7);
    /// `CANCEL`.
    pub const CANCEL: H2Code = H2Code(0x8);
    /// `ENHANCE_YOUR_CALM`.
    pub const ENHANCE_YOUR_CALM: H2Code = H2Code(0xb);

    /// The code a name stands for, `None` for a name RFC 9113 does not define.
    pub fn from_name(name: &str) -> Option<H2Code> {
        let code = NAMES.iter().position(|n| *n == name)?;
        // At most 13: the list is RFC 9113's.
        Some(H2Code(code as u32))
    }

    /// Every name a scenario may write, in the order of their codes (for error messages).
    pub const NAMES: &'static [&'static str] = &NAMES;

    /// The code's name, `None` for a code RFC 9113 does not define.
    pub fn name(self) -> Option<&'static str> {
        NAMES.get(usize::try_from(self.0).ok()?).copied()
    }
}

impl fmt::Display for H2Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            // A code from an extension (or a peer's invention) has no name to show.
            None => write!(f, "{:#x}", self.0),
        }
    }
}

/// A code is written by its name, as a scenario writes it (a trace's JSON says
/// `"refused_stream"`).
impl serde::Serialize for H2Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl From<::h2::Reason> for H2Code {
    fn from(reason: ::h2::Reason) -> H2Code {
        H2Code(u32::from(reason))
    }
}

impl From<H2Code> for ::h2::Reason {
    fn from(code: H2Code) -> ::h2::Reason {
        ::h2::Reason::from(code.0)
    }
}
