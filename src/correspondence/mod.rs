//! Correspondence Go (client-protocol/correspondence.md): games played over days, whose
//! clocks count wall time whether or not anyone is connected, and which sleep in the
//! store while nobody watches them.
//!
//! - [`calendar`]: the wall time these clocks run on, moving with tokio's clock.
//! - [`plan`]: plans of conditional moves, checked and answered as pure functions.
//! - [`vacation`]: vacation days, how they accrue and what a vacation costs.
//!
//! The service that sends players on vacation and back, in all their games, is
//! [`crate::away`]: it drives rooms and the registry, which stand on this module.

pub mod calendar;
pub mod plan;
pub mod vacation;
