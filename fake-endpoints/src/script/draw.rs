//! Draws: where a random step's choices come from.
//!
//! This crate generates no random numbers. The harness owns the one generator of a run (its
//! labelled substreams) and hands each route a [`Draws`], which makes the route's source of
//! draws each time an endpoint is built, so that every endpoint built from one configuration
//! sees the same draws in the same order.

use std::fmt;
use std::sync::Arc;

/// A source of numbers uniform in `[0, 1)`, one per route.
///
/// ```
/// use retrylab_endpoints::Draw;
///
/// struct Fixed(f64);
/// impl Draw for Fixed {
///     fn uniform(&mut self) -> f64 {
///         self.0
///     }
/// }
/// assert_eq!(Fixed(0.25).uniform(), 0.25);
/// ```
pub trait Draw: Send {
    /// The next number, in `[0, 1)`.
    fn uniform(&mut self) -> f64;
}

/// Makes a route's [`Draw`] each time an endpoint is built from its configuration.
///
/// ```
/// use retrylab_endpoints::{Draw, Draws};
///
/// struct Fixed(f64);
/// impl Draw for Fixed {
///     fn uniform(&mut self) -> f64 {
///         self.0
///     }
/// }
/// let draws = Draws::new(|| Box::new(Fixed(0.9)));
/// assert_eq!(draws.make().uniform(), 0.9);
/// assert_eq!(draws, draws.clone());
/// ```
#[derive(Clone)]
pub struct Draws(Arc<dyn Fn() -> Box<dyn Draw> + Send + Sync>);

impl Draws {
    /// Draws made by `make`, called once per endpoint built.
    pub fn new(make: impl Fn() -> Box<dyn Draw> + Send + Sync + 'static) -> Self {
        Self(Arc::new(make))
    }

    /// A fresh source of draws.
    pub fn make(&self) -> Box<dyn Draw> {
        (self.0)()
    }
}

impl fmt::Debug for Draws {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Draws(..)")
    }
}

/// Two configurations are equal when they share the same maker (a clone).
impl PartialEq for Draws {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Draws {}

/// Draws given in advance, for tests of what consumes them.
#[cfg(test)]
pub(crate) struct Seq(pub(crate) Vec<f64>);

#[cfg(test)]
impl Draw for Seq {
    fn uniform(&mut self) -> f64 {
        self.0.remove(0)
    }
}
