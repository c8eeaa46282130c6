//! The bounded cache of states the instance holds between calls, keyed by
//! the host's string refs (docs/abi.md, "State references").

use crate::table::Table;

/// Up to `capacity` tables by ref, least recently used evicted first.
/// Entries are kept oldest first; 16 entries make a linear scan the fastest lookup.
#[derive(Debug)]
pub struct StateCache {
    entries: Vec<(String, Table)>,
    capacity: usize,
}

impl StateCache {
    /// The capacity ABI v1 promises.
    pub const CAPACITY: usize = 16;

    /// An empty cache of `StateCache::CAPACITY` entries.
    pub fn new() -> StateCache {
        StateCache::with_capacity(StateCache::CAPACITY)
    }

    /// An empty cache of `capacity` (>= 1) entries.
    pub fn with_capacity(capacity: usize) -> StateCache {
        assert!(capacity >= 1, "a state cache needs room for one entry");
        StateCache { entries: Vec::with_capacity(capacity), capacity }
    }

    fn position(&self, state_ref: &str) -> Option<usize> {
        self.entries.iter().position(|(key, _)| key == state_ref)
    }

    /// Whether `state_ref` is cached (does not count as a use).
    pub fn contains(&self, state_ref: &str) -> bool {
        self.position(state_ref).is_some()
    }

    /// The table cached under `state_ref`, marking it most recently used.
    pub fn get(&mut self, state_ref: &str) -> Option<&Table> {
        let at = self.position(state_ref)?;
        let entry = self.entries.remove(at);
        self.entries.push(entry);
        self.entries.last().map(|(_, table)| table)
    }

    /// Remove and return the table cached under `state_ref`.
    pub fn take(&mut self, state_ref: &str) -> Option<Table> {
        let at = self.position(state_ref)?;
        Some(self.entries.remove(at).1)
    }

    /// Cache `table` under `state_ref` as the most recently used entry,
    /// replacing an entry of the same ref, evicting the least recent when full.
    pub fn put(&mut self, state_ref: String, table: Table) {
        if let Some(at) = self.position(&state_ref) {
            self.entries.remove(at);
        } else if self.entries.len() >= self.capacity {
            self.entries.remove(0);
        }
        self.entries.push((state_ref, table));
    }

    /// Number of cached states.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Default for StateCache {
    fn default() -> Self {
        StateCache::new()
    }
}

#[cfg(test)]
mod tests {
    use super::StateCache;
    use crate::state::State;
    use crate::table::Table;

    fn table(round: i64) -> Table {
        let mut state = State::default();
        state.meta_data.insert("round".into(), round.into());
        Table::new(state)
    }

    fn round(table: &Table) -> i64 {
        table.meta("round").and_then(|v| v.as_i64()).unwrap()
    }

    #[test]
    fn hit_miss_and_take() {
        let mut cache = StateCache::new();
        cache.put("a".into(), table(1));
        assert_eq!(cache.get("a").map(round), Some(1));
        assert!(cache.get("b").is_none());
        assert_eq!(cache.take("a").map(|t| round(&t)), Some(1));
        assert!(cache.is_empty());
    }

    #[test]
    fn evicts_the_least_recently_used() {
        let mut cache = StateCache::with_capacity(2);
        cache.put("a".into(), table(1));
        cache.put("b".into(), table(2));
        cache.get("a");
        cache.put("c".into(), table(3));
        assert!(cache.contains("a") && cache.contains("c") && !cache.contains("b"));
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn putting_an_existing_ref_replaces_it_without_evicting() {
        let mut cache = StateCache::with_capacity(2);
        cache.put("a".into(), table(1));
        cache.put("b".into(), table(2));
        cache.put("a".into(), table(9));
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get("a").map(round), Some(9));
        assert!(cache.contains("b"));
    }
}
