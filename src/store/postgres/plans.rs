//! The PostgreSQL side of [`PlanStore`], and the rows the log's batches write.

use tokio_postgres::Client;

use super::prepared::Prepared;
use super::{PgStore, col, pg_error};
use crate::store::{PlanStore, StoreError};

/// Keeps (or with `None` drops) a player's plan, in a log batch's transaction.
pub(super) async fn set_plan(
    b: &mut Prepared<'_>,
    game_id: &str,
    color: &str,
    plan: Option<&str>,
) -> Result<(), StoreError> {
    match plan {
        Some(plan) => {
            b.execute(
                "INSERT INTO plans (game_id, color, plan) VALUES ($1, $2, $3)
                 ON CONFLICT (game_id, color) DO UPDATE SET plan = excluded.plan",
                &[&game_id, &color, &plan],
            )
            .await?
        }
        None => {
            b.execute(
                "DELETE FROM plans WHERE game_id = $1 AND color = $2",
                &[&game_id, &color],
            )
            .await?
        }
    };
    Ok(())
}

async fn plans(c: &mut Client, game_id: String) -> Result<Vec<(String, String)>, StoreError> {
    c.query(
        "SELECT color, plan FROM plans WHERE game_id = $1 ORDER BY color",
        &[&game_id],
    )
    .await
    .map_err(pg_error)?
    .iter()
    .map(|row| Ok((col(row, 0)?, col(row, 1)?)))
    .collect()
}

impl PlanStore for PgStore {
    fn plans(&self, game_id: &str) -> Result<Vec<(String, String)>, StoreError> {
        let game_id = game_id.to_owned();
        self.connections.run(move |c| Box::pin(plans(c, game_id)))
    }
}
