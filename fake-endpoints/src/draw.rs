//! Draws: where a random step's choices come from.
//!
//! This crate generates no random numbers. The harness owns the one generator of a run (its
//! labelled substreams) and hands each route a [`Draws`], which makes the route's source of
//! draws each time an endpoint is built, so that every endpoint built from one configuration
//! sees the same draws in the same order.

use std::fmt;
use std::sync::Arc;

use crate::step::{Branch, Step};

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

/// What a route draws with when its configuration gives no [`Draws`]: always one half, so
/// a step with `p` above 0.5 takes `then` and any other takes `else`.
pub(crate) struct Half;

impl Draw for Half {
    fn uniform(&mut self) -> f64 {
        0.5
    }
}

/// Resolves `step` with `draw`: itself, or the branch its choice takes (and so on, for a
/// branch that chooses again), with the branches taken. Each choice consumes one draw.
pub(crate) fn resolve(mut step: Arc<Step>, draw: &mut dyn Draw) -> (Arc<Step>, Vec<Branch>) {
    let mut branches = Vec::new();
    // Each branch is a step of the configuration, so the depth is bounded by it.
    while let Some(chance) = step.chance.clone() {
        let (branch, next) = chance.branch(draw.uniform());
        branches.push(branch);
        step = Arc::clone(next);
    }
    (step, branches)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Seq(Vec<f64>);
    impl Draw for Seq {
        fn uniform(&mut self) -> f64 {
            self.0.remove(0)
        }
    }

    #[test]
    fn below_p_takes_then_and_nested_choices_draw_again() {
        let step = Arc::new(Step::chance(
            0.3,
            Step::status(503),
            Step::chance(0.5, Step::status(429), Step::status(200)),
        ));
        let mut draws = Seq(vec![0.29, 0.3, 0.49, 0.99, 0.5]);
        let seen: Vec<(u16, Vec<Branch>)> = (0..3)
            .map(|_| {
                let (step, branches) = resolve(Arc::clone(&step), &mut draws);
                (step.respond.status.as_u16(), branches)
            })
            .collect();
        use Branch::*;
        assert_eq!(
            seen,
            [
                (503, vec![Then]),
                (429, vec![Else, Then]),
                (200, vec![Else, Else])
            ]
        );
        assert!(draws.0.is_empty());
    }

    #[test]
    fn a_step_without_a_choice_draws_nothing() {
        let (step, branches) = resolve(Arc::new(Step::status(204)), &mut Half);
        assert_eq!((step.respond.status.as_u16(), branches), (204, vec![]));
    }
}
