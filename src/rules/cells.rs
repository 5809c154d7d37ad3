//! The padded array every board lives in: one edge cell on each side of the largest board.
//! Its own module because the board and the Zobrist keys both size their tables by it,
//! and neither should depend on the other for it.

use super::vertex::MAX_SIZE;

/// Width of the padded array for the largest board.
const MAX_STRIDE: usize = MAX_SIZE as usize + 2;
/// Cells in the padded array.
pub(super) const CELLS: usize = MAX_STRIDE * MAX_STRIDE;
