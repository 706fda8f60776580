//! Property search: proptest draws fault schedules around a base scenario, runs a client
//! against each, checks invariants, and shrinks the first failing schedule into the smallest
//! scenario that still fails, written as a regression file ready to commit.
//!
//! Hand-written scenarios find the defects their authors thought of; a search tries
//! hundreds of schedules (bursts of 5xx, 429 with every form of `Retry-After`, latencies and
//! their distributions, resets and closes after some bytes, hangs, commits, partitions and
//! crashes, seeds) that nobody wrote. [`Space`] says what varies, [`Invariants`] what must
//! hold, and [`SearchConfig`] the rest:
//!
//! ```
//! use retrylab::prelude::*;
//! use retrylab::search::{Invariants, SearchConfig, Space};
//!
//! let base = Scenario::builder("orders under faults")
//!     .endpoint("api", endpoint())
//!     .latency(ms(1))
//!     .operation(post("api", "/orders"))
//!     .build()
//!     .unwrap();
//! let policy = exponential().initial(ms(100)).max_attempts(3);
//! let invariants = Invariants::from(expect().conforms_to(policy.clone().into()))
//!     .holds("no more than 3 attempts", |report| match report.trace().attempts.len() {
//!         n if n <= 3 => Ok(()),
//!         n => Err(format!("{n} attempts")),
//!     });
//! let client = retrylab::search::reference_client(&policy.into()); // or any client closure
//! retrylab::search(SearchConfig::new(base).seed(1).cases(256).space(Space::default()))
//!     .check(client, invariants); // panics with the regression file's path if a case fails
//! ```
//!
//! A failing search panics with the failed verdicts and the path of the regression file it
//! wrote (`scenarios/regressions/` unless [`SearchConfig::regressions`] says otherwise);
//! [`Search::run`] returns the [`SearchOutcome`] instead.
//!
//! # Determinism
//!
//! Case `i` is drawn by proptest's `TestRunner` on a `ChaCha` generator keyed by the search
//! seed and `i` alone, so the same seed gives the same cases, shards agree on every case,
//! and the first failing case is the same however the search is split. Shrinking is
//! proptest's (simplify after a failure, complicate after a pass) bounded by a count of
//! steps, so the same seed gives the same smallest case and the same file, byte for byte.
//! proptest's wall-clock knobs (`PROPTEST_MAX_SHRINK_TIME`, `PROPTEST_TIMEOUT`,
//! `PROPTEST_FORK`) are not used: each would make the smallest case depend on the machine's
//! speed and load, and a run already has its own limits, on virtual time. proptest's failure
//! persistence (`proptest-regressions/`) is replaced by the regression file, which is a
//! scenario like any other. `PROPTEST_CASES` is honoured ([`overrides::cases`]).
//!
//! [`overrides::cases`]: crate::overrides::cases

mod case;
mod config;
mod failure;
mod invariant;
mod outcome;
mod pool;
mod regression;
mod shard;
mod space;
mod strategy;
mod vary;

use std::collections::BTreeMap;
use std::fmt::{self, Debug};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use crate::Env;
use crate::client::ReferenceClient;

pub use config::{DEFAULT_REGRESSIONS, SearchConfig};
pub use failure::Failure;
pub use invariant::Invariants;
pub use outcome::SearchOutcome;
pub use shard::{Shard, ShardError};
pub use space::Space;

/// A built-in client's call, boxed: what [`reference_client`] gives for each call.
pub type ReferenceCall = std::pin::Pin<Box<dyn Future<Output = Result<u16, String>>>>;

/// The client a scenario's `client:` policy names, for a search: a reference client per
/// client instance of a run, shared by that client's calls as in
/// [`Scenario::run_builtin`](crate::scenario::Scenario::run_builtin) (so a retry quota
/// carries from one call to the next), with the policy's `attempt_timeout`. Each clone of the
/// closure starts with new clients: a search clones it for every case, so nothing is carried
/// from one case to the next. A `custom:` client has no policy, and every call fails saying
/// so.
///
/// ```
/// use retrylab::prelude::*;
/// use retrylab::scenario::CountSpec;
/// use retrylab::search::{Invariants, SearchConfig, reference_client};
///
/// let base = Scenario::builder("x")
///     .endpoint("api", endpoint())
///     .operation(get("api", "/"))
///     .client(exponential().initial(ms(10)).max_attempts(3))
///     .build()
///     .unwrap();
/// let client = reference_client(&base.client);
/// let invariants = Invariants::from(expect().attempts(CountSpec::between(1, 3)));
/// let outcome = retrylab::search(SearchConfig::new(base).cases(5)).run(client, &invariants);
/// assert!(outcome.unwrap().passed());
/// ```
pub fn reference_client(
    spec: &crate::scenario::ClientSpec,
) -> impl Fn(Env) -> ReferenceCall + Clone + Send + Sync + 'static {
    let spec = spec.clone();
    let timeout = spec.attempt_timeout().map(|t| t.as_duration());
    let clients = RunClients::default();
    move |env| {
        let client = clients.get(env.client_index(), || {
            let policy = spec.policy().map_err(|e| e.to_string())?;
            let mut client = ReferenceClient::new(policy);
            if let Some(timeout) = timeout {
                client = client.attempt_timeout(timeout);
            }
            Ok(client.shared())
        });
        Box::pin(async move {
            let client = client?;
            client.call(&env).await.map_err(|e| e.to_string())
        })
    }
}

/// The reference clients of one run, by client index, made at each client's first call.
///
/// Its `Clone` gives an empty set, not a shared one: a clone of the closure that holds it is
/// the client of another run, which must not inherit this run's quotas.
#[derive(Default)]
struct RunClients(Mutex<BTreeMap<u32, Result<Arc<ReferenceClient>, String>>>);

impl Clone for RunClients {
    fn clone(&self) -> RunClients {
        RunClients::default()
    }
}

impl RunClients {
    /// Client `index`'s reference client, made by `make` on its first call.
    fn get(
        &self,
        index: u32,
        make: impl FnOnce() -> Result<Arc<ReferenceClient>, String>,
    ) -> Result<Arc<ReferenceClient>, String> {
        // A poisoned lock means a call panicked while it looked up its client; that panic
        // fails the run, and the map itself is whole (every insert is one step).
        let mut clients = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        clients.entry(index).or_insert_with(make).clone()
    }
}

/// A search over `config`: call [`Search::check`] (from a `#[test]`) or [`Search::run`].
#[must_use = "a search does nothing until `check` or `run` is called"]
pub fn search(config: SearchConfig) -> Search {
    Search {
        config,
        progress: None,
    }
}

/// A configured search.
#[must_use = "a search does nothing until `check` or `run` is called"]
pub struct Search {
    config: SearchConfig,
    progress: Option<Box<dyn FnMut(u32, u32)>>,
}

impl Debug for Search {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Search")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Why a search could not run: not a failure of the client, but of its setup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// `PROPTEST_CASES` is not a count of cases.
    Cases(crate::overrides::CasesOverrideError),
    /// The base scenario cannot be searched around: why.
    Base(String),
    /// A case is not a valid scenario (a space too wide for the base's limits, say): what
    /// loading it says.
    InvalidCase(String),
    /// The threads judging the cases ended before judging them all.
    Lost,
    /// No invariant to check: every case would hold.
    NoInvariants,
    /// A setting of the configuration or its space that a search refuses (no cases, no
    /// threads, no statuses, ...): which.
    Config(String),
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::Cases(e) => write!(f, "{e}"),
            SearchError::Base(why) => write!(f, "the base scenario cannot be searched: {why}"),
            SearchError::InvalidCase(why) => write!(f, "a search case is not valid: {why}"),
            SearchError::Config(why) => write!(f, "the search cannot run: {why}"),
            SearchError::NoInvariants => f.write_str(
                "the search has no invariant: every case would hold, whatever the client does; \
                 write one under the file's `search: { invariants: ... }`, or \
                 add one with `Invariants::holds`",
            ),
            SearchError::Lost => {
                f.write_str("the search's worker threads ended before judging every case")
            }
        }
    }
}

impl std::error::Error for SearchError {}

impl Search {
    /// Calls `progress(tried, to_try)` after each case this shard tries.
    pub fn progress(mut self, progress: impl FnMut(u32, u32) + 'static) -> Search {
        self.progress = Some(Box::new(progress));
        self
    }

    /// The cases this search tries: `PROPTEST_CASES` when set, else the configuration's.
    pub fn cases(&self) -> Result<u32, SearchError> {
        let cases = crate::overrides::cases().map_err(SearchError::Cases)?;
        Ok(cases.unwrap_or(self.config.cases))
    }

    /// Runs the search, calling `client` once per logical call of each case as
    /// [`Scenario::run`](crate::Scenario::run) does, and shrinks the first failing case.
    pub fn run<F, Fut, T, E>(
        &mut self,
        client: F,
        invariants: &Invariants,
    ) -> Result<SearchOutcome, SearchError>
    where
        F: Fn(Env) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Result<T, E>> + 'static,
        T: Debug,
        E: Debug,
    {
        let refused = self.config.refused();
        if !refused.is_empty() {
            return Err(SearchError::Config(refused.join("; ")));
        }
        let cases = self.cases()?;
        if invariants.names().is_empty() {
            return Err(SearchError::NoInvariants);
        }
        let c = &self.config;
        let strategy = match &c.vary {
            Some(paths) => vary::scenarios(&c.base, paths, invariants.expect.clone()),
            None => {
                base_searchable(&c.base)?;
                strategy::scenarios(
                    Arc::new(c.base.clone()),
                    &c.space,
                    invariants.expect.clone(),
                )
            }
        };
        let owned: Vec<u32> = (0..cases).filter(|&i| c.shard.owns(i)).collect();
        let to_try = owned.len() as u32;
        let mut report = |tried: u32| {
            if let Some(progress) = &mut self.progress {
                progress(tried, to_try);
            }
        };
        let scan = pool::first_failure(
            &strategy,
            c.seed,
            &owned,
            c.threads,
            &client,
            invariants,
            &mut report,
        )?;
        let tried = scan.tried;
        let Some(found) = scan.failure else {
            // Every case held, but a case that gave an invariant nothing to judge holds it
            // vacuously: one that no case judged was never tested.
            let never_judged = invariants
                .names()
                .into_iter()
                .filter(|name| !scan.judged.contains(name))
                .collect();
            return Ok(SearchOutcome {
                tried,
                failure: None,
                never_judged,
            });
        };
        // The first failing case of the whole search may lie in another shard, before this
        // one: look there first, so that every split shrinks the same case.
        let earlier: Vec<u32> = (0..found.index).filter(|&j| !c.shard.owns(j)).collect();
        let before = pool::first_failure(
            &strategy,
            c.seed,
            &earlier,
            c.threads,
            &client,
            invariants,
            &mut |_| {},
        )?;
        let mut found = before.failure.unwrap_or(found);
        let shrunk = case::shrink(
            &mut found.tree,
            found.failed,
            found.judged,
            c.max_shrink_steps,
            &client,
            invariants,
        )
        .map_err(SearchError::InvalidCase)?;
        let failure = Failure {
            scenario: shrunk.scenario,
            verdicts: shrunk.failed,
            judged: shrunk.judged,
            case: found.index,
            search_seed: c.seed,
            shrink_steps: shrunk.steps,
            closures: invariants.closures.iter().map(|(n, _)| n.clone()).collect(),
        };
        Ok(SearchOutcome {
            tried,
            failure: Some(failure),
            never_judged: Vec::new(),
        })
    }

    /// Runs the search and panics if a case fails, after writing the smallest failing case
    /// as a regression file (its path in the panic's message), or if an invariant was never
    /// judged; panics too when the search cannot run.
    pub fn check<F, Fut, T, E>(mut self, client: F, invariants: Invariants)
    where
        F: Fn(Env) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Result<T, E>> + 'static,
        T: Debug,
        E: Debug,
    {
        let outcome = match self.run(client, &invariants) {
            Ok(outcome) => outcome,
            Err(e) => panic!("{e}"),
        };
        if let Err(why) = outcome.judge(&[], &self.config.regressions) {
            panic!("property search failed: {why}");
        }
    }
}

/// Whether a search can vary `base`: its operation's endpoint is scripted (or has nothing
/// yet), since the cases replace that script.
fn base_searchable(base: &crate::scenario::Scenario) -> Result<(), SearchError> {
    let Some(endpoint) = base.operation_endpoint() else {
        return Err(SearchError::Base(format!(
            "the operation's endpoint `{}` is not among its endpoints",
            base.operation.endpoint
        )));
    };
    if !endpoint.routes.is_empty() || endpoint.timeline.is_some() {
        return Err(SearchError::Base(format!(
            "the cases replace the script of endpoint `{}`, which has routes or a timeline",
            base.operation.endpoint
        )));
    }
    Ok(())
}
