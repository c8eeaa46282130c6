//! Space id → position in `State::spaces`: a small open-addressing hash table,
//! so that a lookup (which games make many times a move) is one hash of the
//! id and usually one comparison, instead of a binary search's string compares.

use crate::state::Space;

/// Slot value of an empty slot (positions are stored plus one).
const EMPTY: u32 = 0;

#[derive(Clone, Debug, Default)]
pub(crate) struct SpaceIndex {
    /// Each space's id and its hash, by position in `State::spaces`.
    ids: Vec<(u32, String)>,
    /// Power-of-two table of position + 1 (`EMPTY` when unused), at least
    /// twice as long as `ids`; linear probing from `hash & mask`.
    slots: Vec<u32>,
}

/// FNV-1a over the id's bytes (ids are short; any mixing will do).
fn hash(space_id: &str) -> u32 {
    space_id.bytes().fold(0x811C_9DC5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

impl SpaceIndex {
    /// The index of `spaces`; `Err(id)` names a space id used twice.
    pub(crate) fn build(spaces: &[Space]) -> Result<SpaceIndex, String> {
        let size = (spaces.len() * 2).next_power_of_two().max(4);
        let mut index = SpaceIndex { ids: Vec::with_capacity(spaces.len()), slots: vec![EMPTY; size] };
        for (position, space) in spaces.iter().enumerate() {
            let id_hash = hash(&space.space_id);
            let mut slot = id_hash as usize & (size - 1);
            while index.slots[slot] != EMPTY {
                let (other_hash, other_id) = &index.ids[index.slots[slot] as usize - 1];
                if *other_hash == id_hash && *other_id == space.space_id {
                    return Err(space.space_id.clone());
                }
                slot = (slot + 1) & (size - 1);
            }
            index.slots[slot] = position as u32 + 1;
            index.ids.push((id_hash, space.space_id.clone()));
        }
        Ok(index)
    }

    /// Position of `space_id`, if there is such a space.
    pub(crate) fn get(&self, space_id: &str) -> Option<usize> {
        let mask = self.slots.len().checked_sub(1)?;
        let id_hash = hash(space_id);
        let mut slot = id_hash as usize & mask;
        loop {
            let entry = self.slots[slot];
            if entry == EMPTY {
                return None;
            }
            let position = entry as usize - 1;
            let (other_hash, other_id) = &self.ids[position];
            if *other_hash == id_hash && other_id == space_id {
                return Some(position);
            }
            slot = (slot + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SpaceIndex;
    use crate::rng::Rng;
    use crate::state::Space;

    fn spaces(ids: &[String]) -> Vec<Space> {
        ids.iter().map(|id| Space::new(id.as_str(), "cell")).collect()
    }

    #[test]
    fn finds_every_space_and_nothing_else() {
        let mut rng = Rng::new(9);
        for count in [0usize, 1, 2, 3, 9, 64, 200] {
            // Ids of one to three letters from a small alphabet: many share prefixes.
            let mut ids: Vec<String> = Vec::new();
            while ids.len() < count {
                let id: String = (0..=rng.below(3usize)).map(|_| char::from(b'a' + rng.below(7u8))).collect();
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            let index = SpaceIndex::build(&spaces(&ids)).unwrap();
            for (position, id) in ids.iter().enumerate() {
                assert_eq!(index.get(id), Some(position), "id {:?}", id);
            }
            for missing in ["", "z", "abcd", "gggg"] {
                assert_eq!(index.get(missing), None);
            }
        }
    }

    #[test]
    fn a_repeated_id_is_refused_by_name() {
        let ids: Vec<String> = ["a1", "b2", "c3", "b2"].iter().map(|s| s.to_string()).collect();
        assert_eq!(SpaceIndex::build(&spaces(&ids)).unwrap_err(), "b2");
    }
}
