//! Single elimination from a seeded bracket: seed 1 meets seed 2 only in the final,
//! and when the field is not a power of two the top seeds have the first-round byes.

use super::field::Seat;

/// The bracket's first-round slots for `seeded` (strongest first): a power of two of
/// slots, `None` where a seed beyond the field (a bye) would stand.
pub fn bracket(seeded: &[Seat]) -> Vec<Option<Seat>> {
    let size = seeded.len().next_power_of_two().max(2);
    // Seed numbers by slot: [1, 2] → [1, 4, 2, 3] → [1, 8, 4, 5, 2, 7, 3, 6] …
    let mut order = vec![1usize];
    while order.len() < size {
        let next = order.len() * 2 + 1;
        order = order.iter().flat_map(|&s| [s, next - s]).collect();
    }
    order
        .into_iter()
        .map(|s| seeded.get(s - 1).copied())
        .collect()
}

/// The next round's slots from this round's: each pair of slots sends on its winner,
/// named by `winner(a, b)`, or the one present when the other is a bye. `None` while a
/// game of the round has no winner yet.
pub fn advance(
    slots: &[Option<Seat>],
    mut winner: impl FnMut(Seat, Seat) -> Option<Seat>,
) -> Option<Vec<Option<Seat>>> {
    slots
        .chunks(2)
        .map(|pair| match (pair[0], pair.get(1).copied().flatten()) {
            (Some(a), Some(b)) => winner(a, b).map(Some),
            (a, b) => Some(a.or(b)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_two_seeds_meet_only_in_the_final_and_top_seeds_get_the_byes() {
        let seeded: Vec<Seat> = (100..106).collect(); // six players, seeds 1..6
        let slots = bracket(&seeded);
        assert_eq!(
            slots,
            vec![
                Some(100),
                None,
                Some(103),
                Some(104),
                Some(101),
                None,
                Some(102),
                Some(105)
            ]
        );
        // The stronger seed (lower seat number here) always wins.
        let mut round = slots;
        let mut rounds = 0;
        while round.len() > 1 {
            round = advance(&round, |a, b| Some(a.min(b))).unwrap();
            rounds += 1;
            if round.len() == 2 {
                assert_eq!(round, vec![Some(100), Some(101)]);
            }
        }
        assert_eq!((round, rounds), (vec![Some(100)], 3));
        assert_eq!(advance(&[Some(1), Some(2)], |_, _| None), None);
    }
}
