//! Interning the names a run records (methods, paths, endpoints, header values), so records
//! stay `Copy` and allocation-free. Public through `retrylab::internals` only: a
//! tuning of the recorder, outside the stability promise.

use super::Name;

/// Interns names while a run records, so records stay `Copy` and allocation-free.
#[derive(Debug, Default)]
pub struct Interner {
    names: Vec<String>,
    /// FNV-1a: the index hashes a few short names per attempt, where `SipHash`'s setup
    /// dominates. It is only looked up, never iterated, so no output depends on its order.
    index: fnv::FnvHashMap<String, Name>,
    /// The names interned or looked up last, newest first: a run interns the same few
    /// (its method, its path, the client's state) on every attempt, and comparing a short
    /// text with a handful of names costs less than hashing it and probing the index.
    recent: [Option<Name>; RECENT_NAMES],
}

/// How many names [`Interner`] compares a text with before it looks in its index.
const RECENT_NAMES: usize = 4;

impl Interner {
    /// The name for `text`, allocating only the first time it is seen.
    pub fn intern(&mut self, text: &str) -> Name {
        let names = &self.names;
        let hit = self
            .recent
            .iter()
            .map_while(|recent| *recent)
            .position(|name| names.get(name.0 as usize).is_some_and(|n| n == text));
        if let Some(i) = hit {
            // Moved to the front, so the few names of one attempt stay in the cache.
            self.recent[..=i].rotate_right(1);
            if let Some(name) = self.recent[0] {
                return name;
            }
        }
        let name = match self.index.get(text) {
            Some(name) => *name,
            None => {
                let name = Name(self.names.len() as u32);
                self.names.push(text.to_owned());
                self.index.insert(text.to_owned(), name);
                name
            }
        };
        self.recent.rotate_right(1);
        self.recent[0] = Some(name);
        name
    }

    /// An interner that already holds `names` (by index).
    pub fn from_names(names: Vec<String>) -> Interner {
        let index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), Name(i as u32)))
            .collect();
        Interner {
            names,
            index,
            recent: [None; RECENT_NAMES],
        }
    }

    /// The text of an interned name.
    pub fn name(&self, name: Name) -> &str {
        self.names.get(name.0 as usize).map_or("?", String::as_str)
    }

    /// The interned texts, by index (iteration order is insertion order, not hash order).
    pub fn into_names(self) -> Vec<String> {
        self.names
    }
}
