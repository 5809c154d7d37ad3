//! Handicap stones on the traditional star points.
//!
//! The rule for every size (the GTP `fixed_handicap` placement): the corner points lie on
//! the 4th line from each edge on boards of 13 and more, on the 3rd line on smaller ones.
//! Two to four stones take the corners (lower left, upper right, upper left, lower
//! right). Odd boards of 9 and more also have side and centre star points, so they take up
//! to nine: five adds the centre, six the left and right sides, seven adds the centre to
//! those, eight the four sides, nine all. Other boards (even sizes, 7 and smaller) take at
//! most four; boards under 7 take no fixed handicap (free placement still works).

use super::vertex::Vertex;

/// A handicap that cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandicapError {
    #[error("a handicap is from 2 to 9 stones, not {0}")]
    Count(u8),
    #[error("a {size}x{size} board has no fixed placement for {stones} handicap stones")]
    NoPlacement { size: u8, stones: u8 },
}

/// The most handicap stones a game has.
pub const MAX_STONES: u8 = 9;

/// Checks a handicap stone count (0 means an even game; 1 is not a handicap).
pub fn check_count(stones: u8) -> Result<(), HandicapError> {
    match stones {
        0 | 2..=MAX_STONES => Ok(()),
        n => Err(HandicapError::Count(n)),
    }
}

/// The star points for a fixed handicap of `stones` on a `size` board, in the GTP order.
pub fn fixed_points(size: u8, stones: u8) -> Result<Vec<Vertex>, HandicapError> {
    check_count(stones)?;
    if stones == 0 {
        return Ok(Vec::new());
    }
    let max = match size {
        s if s < 7 => 0,
        s if s >= 9 && s % 2 == 1 => 9,
        _ => 4,
    };
    if stones > max {
        return Err(HandicapError::NoPlacement { size, stones });
    }
    let lo = if size >= 13 { 3 } else { 2 };
    let hi = size - 1 - lo;
    let mid = size / 2;
    let corners = [(lo, lo), (hi, hi), (lo, hi), (hi, lo)];
    let mut points: Vec<(u8, u8)> = corners
        .iter()
        .copied()
        .take(stones.min(4) as usize)
        .collect();
    let sides: &[(u8, u8)] = match stones {
        5 => &[(mid, mid)],
        6 => &[(lo, mid), (hi, mid)],
        7 => &[(lo, mid), (hi, mid), (mid, mid)],
        8 => &[(lo, mid), (hi, mid), (mid, lo), (mid, hi)],
        9 => &[(lo, mid), (hi, mid), (mid, lo), (mid, hi), (mid, mid)],
        _ => &[],
    };
    points.extend_from_slice(sides);
    Ok(points.into_iter().map(|(x, y)| Vertex::new(x, y)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(size: u8, n: u8) -> String {
        fixed_points(size, n)
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn nineteen_uses_the_fourth_line_in_gtp_order() {
        assert_eq!(names(19, 2), "D4 Q16");
        assert_eq!(names(19, 3), "D4 Q16 D16");
        assert_eq!(names(19, 4), "D4 Q16 D16 Q4");
        assert_eq!(names(19, 5), "D4 Q16 D16 Q4 K10");
        assert_eq!(names(19, 9), "D4 Q16 D16 Q4 D10 Q10 K4 K16 K10");
    }

    #[test]
    fn small_boards_use_the_third_line() {
        assert_eq!(names(9, 2), "C3 G7");
        assert_eq!(names(13, 4), "D4 K10 D10 K4");
        assert_eq!(names(9, 8), "C3 G7 C7 G3 C5 G5 E3 E7");
    }

    #[test]
    fn impossible_handicaps_are_refused() {
        assert_eq!(fixed_points(19, 1), Err(HandicapError::Count(1)));
        assert_eq!(fixed_points(19, 10), Err(HandicapError::Count(10)));
        assert!(matches!(
            fixed_points(10, 5),
            Err(HandicapError::NoPlacement { .. })
        ));
        assert!(matches!(
            fixed_points(5, 2),
            Err(HandicapError::NoPlacement { .. })
        ));
        assert!(fixed_points(19, 0).unwrap().is_empty());
    }
}
