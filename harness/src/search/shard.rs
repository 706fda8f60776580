//! Shards: a search split over test runs, each trying the cases of one residue class.

use std::fmt;
use std::str::FromStr;

/// Shard `k` of `n` (`k` from 1): it tries the cases `i` with `i % n == k - 1`.
///
/// Every case is derived from the search seed and its index alone, so shards agree on what
/// case `i` is, and a shard that finds a failure first confirms that no case before it fails
/// in any other shard: the minimal failing file is the same however the search is split.
///
/// ```
/// use retrylab::search::Shard;
///
/// let s: Shard = "2/3".parse().unwrap();
/// assert_eq!((s.index(), s.count()), (2, 3));
/// assert!(s.owns(1) && s.owns(4) && !s.owns(0));
/// assert_eq!(s.to_string(), "2/3");
/// assert!("0/3".parse::<Shard>().is_err());
/// assert!(Shard::WHOLE.owns(7));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    k: u32,
    n: u32,
}

impl Shard {
    /// The whole search, unsplit (`1/1`).
    pub const WHOLE: Shard = Shard { k: 1, n: 1 };

    /// Shard `k` of `n`; `None` unless `1 <= k <= n`.
    pub fn new(k: u32, n: u32) -> Option<Shard> {
        (k >= 1 && k <= n).then_some(Shard { k, n })
    }

    /// Which shard, from 1.
    pub fn index(&self) -> u32 {
        self.k
    }

    /// How many shards.
    pub fn count(&self) -> u32 {
        self.n
    }

    /// Whether case `i` (from 0) belongs to this shard.
    pub fn owns(&self, i: u32) -> bool {
        i % self.n == self.k - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// A `--shard` value that is not `k/n` with `1 <= k <= n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardError(String);

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shard `{}`: expected k/n with 1 <= k <= n, such as 1/4",
            crate::scenario::visible(&self.0)
        )
    }
}

impl std::error::Error for ShardError {}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let error = || ShardError(s.to_owned());
        let (k, n) = s.split_once('/').ok_or_else(error)?;
        let number = |t: &str| -> Result<u32, ShardError> {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(error());
            }
            t.parse().map_err(|_| error())
        };
        Shard::new(number(k)?, number(n)?).ok_or_else(error)
    }
}
