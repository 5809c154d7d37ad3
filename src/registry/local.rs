//! One node: every game runs here, and a game's room is rebuilt from its log whenever
//! it is asked for and none runs, or (a sleeping correspondence game) when it is due.

use std::sync::Weak;
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::{Placement, Registry};
use crate::protocol::Refusal;
use crate::room::{Prepared, RoomHandle};

pub struct Local;

impl Placement for Local {
    fn place<'a>(
        &'a self,
        registry: &'a Registry,
        game_id: &'a str,
    ) -> BoxFuture<'a, Result<RoomHandle, Refusal>> {
        Box::pin(async move {
            let prepared = registry.rebuild(game_id).await?;
            Ok(registry.register(prepared))
        })
    }

    fn open<'a>(&'a self, registry: &'a Registry, prepared: Prepared) -> BoxFuture<'a, ()> {
        registry.replace(prepared.handle().clone());
        prepared.start();
        Box::pin(std::future::ready(()))
    }

    fn disown(&self, _game_id: &str, _fence: Option<u64>) {}

    fn wake<'a>(
        &'a self,
        registry: &'a Registry,
        game_id: &'a str,
    ) -> BoxFuture<'a, Result<bool, Refusal>> {
        Box::pin(async move {
            if registry.is_awake(game_id) {
                return Ok(false);
            }
            registry.room(game_id).await?;
            Ok(true)
        })
    }

    fn runs_here(&self, _game_id: &str) -> bool {
        true
    }

    fn hand_over<'a>(&'a self, _registry: &'a Registry) -> BoxFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    fn patience(&self) -> Duration {
        Duration::ZERO
    }

    /// One node wakes its sleeping correspondence games itself.
    fn keep(&self, registry: Weak<Registry>) {
        super::waker::spawn(registry, super::waker::Turn::always());
    }
}
