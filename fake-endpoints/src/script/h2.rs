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

/// The codes RFC 9113 defines, with their names: the ones a scenario may write.
const NAMES: [(&str, u32); 14] = [
    ("no_error", 0x0),
    ("protocol_error", 0x1),
    ("internal_error", 0x2),
    ("flow_control_error", 0x3),
    ("settings_timeout", 0x4),
    ("stream_closed", 0x5),
    ("frame_size_error", 0x6),
    ("refused_stream", 0x7),
    ("cancel", 0x8),
    ("compression_error", 0x9),
    ("connect_error", 0xa),
    ("enhance_your_calm", 0xb),
    ("inadequate_security", 0xc),
    ("http_1_1_required", 0xd),
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
        NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, code)| H2Code(code))
    }

    /// Every name a scenario may write, in the order of their codes (for error messages).
    pub fn names() -> impl Iterator<Item = &'static str> {
        NAMES.iter().map(|(name, _)| *name)
    }

    /// The code's name, `None` for a code RFC 9113 does not define.
    pub fn name(self) -> Option<&'static str> {
        NAMES
            .iter()
            .find(|(_, code)| *code == self.0)
            .map(|(name, _)| *name)
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
