//! Correspondence Go (client-protocol/correspondence.md): games played over days, whose
//! clocks count wall time whether or not anyone is connected, and which sleep in the
//! store while nobody watches them.
//!
//! - [`calendar`]: the wall time these clocks run on, moving with tokio's clock.

pub mod calendar;
