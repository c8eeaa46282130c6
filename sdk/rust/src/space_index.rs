//! Space id → position in `State::spaces`, for lookups in O(log n).
//! A sorted Vec rather than a BTreeMap: same speed at table sizes, far less wasm.

use crate::state::Space;

#[derive(Clone, Debug, Default)]
pub(crate) struct SpaceIndex {
    /// (space_id, position), sorted by space_id.
    sorted: Vec<(String, usize)>,
}

impl SpaceIndex {
    /// The index of `spaces`; `Err(id)` names a space id used twice.
    pub(crate) fn build(spaces: &[Space]) -> Result<SpaceIndex, String> {
        let mut sorted: Vec<(String, usize)> =
            spaces.iter().enumerate().map(|(position, space)| (space.space_id.clone(), position)).collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for pair in sorted.windows(2) {
            if pair[0].0 == pair[1].0 {
                return Err(pair[0].0.clone());
            }
        }
        Ok(SpaceIndex { sorted })
    }

    /// Position of `space_id`, if there is such a space.
    pub(crate) fn get(&self, space_id: &str) -> Option<usize> {
        self.sorted.binary_search_by(|(id, _)| id.as_str().cmp(space_id)).ok().map(|at| self.sorted[at].1)
    }
}
