//! A batch's transaction that prepares each statement once ([`super::log`] writes the
//! batch; the files of the rows a batch may touch write through it).

use std::collections::HashMap;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Statement, Transaction};

use super::pg_error;
use crate::store::StoreError;

/// A batch's transaction with the statements it has prepared: a statement repeated for
/// many items (an event per move, a move count per game) is parsed once per batch, and
/// each item then costs one round trip instead of two.
pub(super) struct Prepared<'c> {
    pub(super) tx: Transaction<'c>,
    statements: HashMap<&'static str, Statement>,
}

impl<'c> Prepared<'c> {
    pub(super) fn new(tx: Transaction<'c>) -> Prepared<'c> {
        Prepared {
            tx,
            statements: HashMap::new(),
        }
    }

    pub(super) async fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().await.map_err(pg_error)
    }

    pub(super) async fn execute(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, StoreError> {
        let statement = match self.statements.get(sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = self.tx.prepare(sql).await.map_err(pg_error)?;
                self.statements.insert(sql, statement.clone());
                statement
            }
        };
        self.tx.execute(&statement, params).await.map_err(pg_error)
    }
}
