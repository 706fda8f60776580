//! Did-you-mean: the known name a misspelled one most likely meant.
//!
//! A suggestion costs time linear in the word and in the candidates, whatever they hold: a
//! word longer than [`MAX_SUGGESTED_CHARS`] gets none (a misspelling is a few characters
//! off a real name, and no real key or name is that long), a candidate whose length rules
//! it out is passed over on its byte length alone, and the edit distance is computed only
//! within a band of the largest distance that counts, stopping as soon as the band passes
//! it. A [`Suggester`] also has a budget of work for all the names of one file, so that a
//! file of many misspelled references to many names costs a bounded time too.

/// Words longer than this many characters get no suggestion.
pub(crate) const MAX_SUGGESTED_CHARS: usize = 64;

/// The work one file's suggestions may take, in steps (a candidate looked at, a cell of the
/// distance computed): about 0.1 s in a debug build. A misspelled name among ten names of
/// ten characters takes about 1,000 steps; one among 1,000 names of 56 characters that all
/// look alike, about 560,000, so it may get no suggestion.
pub(crate) const SUGGESTION_STEPS: usize = 200_000;

/// The closest candidate to a misspelled `word`, if one is close enough to be a likely typo.
///
/// Spellings that differ only in case or separators (`maxAttempts`, `max-attempts`) always
/// match; otherwise the Damerau-Levenshtein distance (adjacent transpositions, each
/// substring edited once) must be small for the word's length: 1 up to 3 characters, 2 up
/// to 7, else 3. One lookup, with a budget of its own.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    Suggester::new(SUGGESTION_STEPS).closest(word, candidates)
}

/// Suggestions for the names of one file, sharing one budget of work: once it is spent,
/// names get no suggestion (their errors are the same otherwise).
pub(crate) struct Suggester {
    steps_left: usize,
    /// The rows of the distance, kept from one candidate to the next.
    rows: [Vec<usize>; 3],
}

impl Suggester {
    /// A suggester that may take `steps` steps in all.
    pub(crate) fn new(steps: usize) -> Self {
        Suggester {
            steps_left: steps,
            rows: [Vec::new(), Vec::new(), Vec::new()],
        }
    }

    /// [`did_you_mean`], within what is left of the budget: the closest candidate found
    /// before it ran out.
    pub(crate) fn closest<'a>(
        &mut self,
        word: &str,
        candidates: impl IntoIterator<Item = &'a str>,
    ) -> Option<String> {
        // A character is 1 to 4 bytes: a word of more bytes than that is too long, uncounted.
        if self.steps_left == 0 || word.len() > 4 * MAX_SUGGESTED_CHARS {
            return None;
        }
        let chars = word.chars().count();
        if chars > MAX_SUGGESTED_CHARS {
            return None;
        }
        let word_lower: Vec<char> = word.chars().flat_map(char::to_lowercase).collect();
        let limit = match chars {
            0..=3 => 1,
            4..=7 => 2,
            _ => 3,
        };
        // Lower-casing may lengthen a string a little (`İ` is two characters lower-case),
        // and a normal spelling drops separators: a candidate of more bytes than this can be
        // neither within the distance nor the same normal spelling of a word this short.
        let longest = 4 * 3 * (MAX_SUGGESTED_CHARS + limit);
        let mut best: Option<(usize, &str)> = None;
        for candidate in candidates {
            let Some(left) = self
                .steps_left
                .checked_sub(1 + candidate.len().min(longest))
            else {
                self.steps_left = 0;
                break;
            };
            self.steps_left = left;
            if candidate == word || candidate.len() > longest {
                continue;
            }
            let distance = if normal(candidate).eq(normal(word)) {
                Some(0)
            } else {
                self.distance(&word_lower, candidate, limit)
            };
            if let Some(d) = distance {
                if best.is_none_or(|(b, _)| d < b) {
                    best = Some((d, candidate));
                }
            }
        }
        best.map(|(_, c)| c.to_string())
    }

    /// The distance between `word` (lower-case) and `candidate` when it is at most `limit`,
    /// charged to the budget; `None` when it is more, or the budget is spent.
    fn distance(&mut self, word: &[char], candidate: &str, limit: usize) -> Option<usize> {
        let other: Vec<char> = candidate.chars().flat_map(char::to_lowercase).collect();
        if word.len().abs_diff(other.len()) > limit {
            return None;
        }
        let cost = other.len() + 1 + word.len() * (2 * limit + 3);
        let Some(left) = self.steps_left.checked_sub(cost) else {
            self.steps_left = 0;
            return None;
        };
        self.steps_left = left;
        distance_within(word, &other, limit, &mut self.rows)
    }
}

/// Letters and digits only, lower-case: `max_attempts`, `maxAttempts` and `MAX-ATTEMPTS`
/// are one spelling.
fn normal(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
}

/// The optimal-string-alignment distance between `a` and `b` when it is at most `limit`,
/// else `None`. Only cells within `limit` of the diagonal can hold a distance that small,
/// so each row computes those `2 limit + 1` cells (and marks the one on each side as out of
/// reach), and the walk stops at the first row whose cells all exceed `limit`, since a
/// row's least value never decreases below. `rows` are reused buffers.
fn distance_within(
    a: &[char],
    b: &[char],
    limit: usize,
    rows: &mut [Vec<usize>; 3],
) -> Option<usize> {
    let (n, m) = (a.len(), b.len());
    if n.abs_diff(m) > limit {
        return None;
    }
    // Beyond the limit, every value is the same to the answer.
    let far = limit + 1;
    let [before, previous, current] = rows;
    for row in [&mut *before, &mut *previous, &mut *current] {
        row.clear();
        row.resize(m + 1, far);
    }
    for (j, cell) in previous.iter_mut().enumerate() {
        *cell = j.min(far);
    }
    for i in 1..=n {
        let low = i.saturating_sub(limit).max(1);
        let high = (i + limit).min(m);
        // The cells beside the band, which the next row reads; those further out are never
        // read.
        current[low - 1] = if low == 1 { i.min(far) } else { far };
        if high < m {
            current[high + 1] = far;
        }
        let mut least = current[low - 1];
        for j in low..=high {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (previous[j - 1] + cost)
                .min(previous[j] + 1)
                .min(current[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            current[j] = d.min(far);
            least = least.min(current[j]);
        }
        if least > limit {
            return None;
        }
        std::mem::swap(before, previous);
        std::mem::swap(previous, current);
    }
    let d = previous[m];
    (d <= limit).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let keys = ["initial", "multiplier", "max_delay", "max_attempts"];
        assert_eq!(did_you_mean("intial", keys), Some("initial".into()));
        assert_eq!(
            did_you_mean("maxAttempts", keys),
            Some("max_attempts".into())
        );
        assert_eq!(did_you_mean("zzz", keys), None);
        assert_eq!(did_you_mean("initial", keys), None);
        assert_eq!(did_you_mean("mutlipiler", keys), Some("multiplier".into()));
    }

    /// The banded distance is the full optimal-string-alignment distance whenever that is
    /// within the limit, on pairs of short strings over a small alphabet.
    #[test]
    fn the_band_agrees_with_the_full_distance() {
        let words: Vec<Vec<char>> = (0..3u32.pow(6))
            .flat_map(|code| {
                (0..=6).map(move |len| {
                    (0..len)
                        .map(|k| char::from(b'a' + ((code / 3u32.pow(k)) % 3) as u8))
                        .collect::<String>()
                })
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .step_by(7)
            .map(|w| w.chars().collect())
            .collect();
        let mut rows = [Vec::new(), Vec::new(), Vec::new()];
        for a in &words {
            for b in &words {
                let (sa, sb): (String, String) = (a.iter().collect(), b.iter().collect());
                let full = strsim::osa_distance(&sa, &sb);
                for limit in 1..=3 {
                    let banded = distance_within(a, b, limit, &mut rows);
                    assert_eq!(banded, (full <= limit).then_some(full), "{sa} {sb} {limit}");
                }
            }
        }
    }

    /// Two names of 100,000 characters each took the quadratic distance minutes; a word
    /// that long now gets no suggestion, and a long candidate is passed over unread.
    #[test]
    fn long_words_and_candidates_cost_nothing() {
        let a = "a".repeat(100_000);
        let b = "b".repeat(100_000);
        assert_eq!(did_you_mean(&a, [b.as_str()]), None);
        let long = format!("{}x", "api".repeat(1000));
        assert_eq!(
            did_you_mean("apj", [long.as_str(), "api"]),
            Some("api".into())
        );
        let at_limit = "k".repeat(MAX_SUGGESTED_CHARS);
        let typo = format!("{}j", &at_limit[1..]);
        assert_eq!(
            did_you_mean(&typo, [at_limit.as_str()]),
            Some(at_limit.clone())
        );
    }

    /// Many names compared with many candidates stop once the budget is spent: later names
    /// get no suggestion, and the work done is the budget's.
    #[test]
    fn the_budget_bounds_many_lookups() {
        let names: Vec<String> = (0..1000)
            .map(|i| format!("{}{i:04}", "x".repeat(56)))
            .collect();
        let mut suggester = Suggester::new(SUGGESTION_STEPS);
        let mut suggested = 0;
        for i in 0..1000 {
            let word = format!("{}{i:04}q", "x".repeat(56));
            if suggester
                .closest(&word, names.iter().map(String::as_str))
                .is_some()
            {
                suggested += 1;
            }
        }
        assert!(suggested > 0 && suggested < 100, "{suggested}");
        assert_eq!(suggester.steps_left, 0);
    }
}
