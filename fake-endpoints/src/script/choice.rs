//! Choices: how a route's random step resolves to the step that answers.

use std::sync::Arc;

use super::draw::Draw;
use super::step::{Branch, Step};

/// What a route draws with when its configuration gives no [`Draws`](crate::Draws): always
/// one half, so a step with `p` above 0.5 takes `then` and any other takes `else`.
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

    use crate::script::draw::Seq;

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
