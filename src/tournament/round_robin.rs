//! Round robin by the Berger tables: everyone meets everyone once, over n − 1 rounds
//! (n rounds for an odd field, where the missing seat is the round's bye).

use super::field::Seat;

/// The pairs of round `round` (0-based) of a round robin among `players` seats, in
/// (black, white) order, and the seat with the bye in an odd field.
///
/// The circle method: the last seat stays put while the others turn one step a round.
/// The fixed seat alternates colours round by round, and each other pair's first seat
/// takes Black on odd distances, so no one's colours drift by more than one.
pub fn berger(players: &[Seat], round: usize) -> (Vec<(Seat, Seat)>, Option<Seat>) {
    let odd = players.len() % 2 == 1;
    let n = players.len() + usize::from(odd);
    if n < 2 {
        return (Vec::new(), players.first().copied());
    }
    let turning = n - 1;
    let r = round % turning;
    let seat = |i: usize| players.get(i).copied();
    let mut pairs = Vec::with_capacity(n / 2);
    let mut bye = None;
    let mut add = |a: usize, b: usize, a_black: bool| match (seat(a), seat(b)) {
        (Some(x), Some(y)) => pairs.push(if a_black { (x, y) } else { (y, x) }),
        (Some(x), None) | (None, Some(x)) => bye = Some(x),
        (None, None) => {}
    };
    add(n - 1, r, r.is_multiple_of(2));
    for i in 1..n / 2 {
        add((r + i) % turning, (r + turning - i) % turning, i % 2 == 1);
    }
    (pairs, bye)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everyone_meets_everyone_once_with_balanced_colours() {
        for n in 2..=13 {
            let players: Vec<Seat> = (0..n).collect();
            let rounds = if n % 2 == 1 { n } else { n - 1 };
            let mut met = vec![vec![0; n]; n];
            let mut blacks = vec![0i32; n];
            let mut byes = vec![0; n];
            for r in 0..rounds {
                let (pairs, bye) = berger(&players, r);
                let mut seen = vec![0; n];
                for &(b, w) in &pairs {
                    met[b][w] += 1;
                    met[w][b] += 1;
                    blacks[b] += 1;
                    blacks[w] -= 1;
                    seen[b] += 1;
                    seen[w] += 1;
                }
                if let Some(s) = bye {
                    byes[s] += 1;
                    seen[s] += 1;
                }
                assert!(seen.iter().all(|&c| c == 1), "n={n} round {r}: {seen:?}");
            }
            for a in 0..n {
                for (b, &times) in met[a].iter().enumerate() {
                    assert_eq!(times, usize::from(a != b), "n={n}: {a} and {b}");
                }
                assert!(
                    blacks[a].abs() <= 2,
                    "n={n}: seat {a} colour balance {}",
                    blacks[a]
                );
                assert_eq!(byes[a], n % 2, "n={n}: seat {a} byes");
            }
        }
    }
}
