//! Battles: the attacker rolls one to three dice (at most one fewer than
//! the armies in the attacking territory), the defender one or two (at most
//! the armies defending). The highest dice of each side are compared in
//! pairs; each pair costs the lower side one army, and a tie goes to the
//! defender.

/// The most dice the attacker may roll from a territory holding `armies`.
pub fn attack_dice_allowed(armies: u32) -> u32 {
    armies.saturating_sub(1).min(3)
}

/// The dice the defender rolls with `armies` in the territory (always as
/// many as allowed: the rules choose for the defender).
pub fn defence_dice(armies: u32) -> u32 {
    armies.min(2)
}

/// Armies lost by (attacker, defender) for one roll: the dice in any order.
pub fn losses(attack: &[u8], defence: &[u8]) -> (u32, u32) {
    let mut attack = attack.to_vec();
    let mut defence = defence.to_vec();
    attack.sort_unstable_by(|a, b| b.cmp(a));
    defence.sort_unstable_by(|a, b| b.cmp(a));
    let mut lost = (0, 0);
    for (a, d) in attack.iter().zip(defence.iter()) {
        if a > d {
            lost.1 += 1;
        } else {
            lost.0 += 1;
        }
    }
    lost
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_pairs_compare_and_ties_go_to_the_defender() {
        assert_eq!(losses(&[6, 1, 1], &[5, 5]), (1, 1));
        assert_eq!(losses(&[6, 6, 2], &[6, 5]), (1, 1));
        assert_eq!(losses(&[3, 4, 2], &[4, 3]), (2, 0), "4 vs 4 and 3 vs 3 both go to the defender");
        assert_eq!(losses(&[2, 6, 5], &[4, 5]), (0, 2));
        assert_eq!(losses(&[6], &[5, 6]), (1, 0), "one attacking die meets the defender's best");
        assert_eq!(losses(&[6, 2], &[1]), (0, 1), "one defending die: one pair only");
    }

    #[test]
    fn dice_allowed() {
        assert_eq!((1..=5).map(attack_dice_allowed).collect::<Vec<_>>(), vec![0, 1, 2, 3, 3]);
        assert_eq!((1..=3).map(defence_dice).collect::<Vec<_>>(), vec![1, 2, 2]);
    }
}
