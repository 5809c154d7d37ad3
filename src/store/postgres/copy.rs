//! The PostgreSQL side of `tengen store migrate`: inserting the rows the database lacks
//! (by their keys, so a second run inserts none), and the tally the copy is checked
//! against.

use tokio_postgres::Client;
use tokio_postgres::types::ToSql;

use super::{PgStore, col, pg_error};
use crate::store::StoreError;
use crate::store::copy::{ACCOUNTS, Cell, Kind, LAST_SEQS, Table, Tally};

impl PgStore {
    /// Inserts each of `rows` unless a row with its key is there; returns how many were
    /// new. A table numbered by an identity column has its counter moved past the copied
    /// numbers, so the next report or chat line gets a fresh one.
    pub(crate) fn import_rows(
        &self,
        table: &'static Table,
        rows: Vec<Vec<Cell>>,
    ) -> Result<u64, StoreError> {
        self.connections
            .run(move |c| Box::pin(import(c, table, rows)))
    }

    /// How many games, events and users there are, and each game's last seq.
    pub(crate) fn tally(&self) -> Result<Tally, StoreError> {
        self.connections.run(|c| Box::pin(tally(c)))
    }
}

async fn import(
    client: &mut Client,
    table: &'static Table,
    rows: Vec<Vec<Cell>>,
) -> Result<u64, StoreError> {
    let identity = table.columns.first() == Some(&("id", Kind::Int));
    let names: Vec<String> = table
        .columns
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .collect();
    let slots: Vec<String> = (1..=names.len()).map(|n| format!("${n}")).collect();
    let sql = format!(
        "INSERT INTO {} ({}) {} VALUES ({}) ON CONFLICT DO NOTHING",
        table.name,
        names.join(", "),
        if identity {
            "OVERRIDING SYSTEM VALUE"
        } else {
            ""
        },
        slots.join(", "),
    );
    let tx = client.transaction().await.map_err(pg_error)?;
    let insert = tx.prepare(&sql).await.map_err(pg_error)?;
    let mut inserted = 0;
    for row in &rows {
        let params: Vec<&(dyn ToSql + Sync)> = row.iter().map(param).collect();
        inserted += tx.execute(&insert, &params).await.map_err(pg_error)?;
    }
    if identity {
        tx.execute(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{0}', 'id'),
                               greatest((SELECT max(id) FROM {0}), 1))",
                table.name
            ),
            &[],
        )
        .await
        .map_err(pg_error)?;
    }
    tx.commit().await.map_err(pg_error)?;
    Ok(inserted)
}

fn param(cell: &Cell) -> &(dyn ToSql + Sync) {
    match cell {
        Cell::Int(v) => v,
        Cell::Real(v) => v,
        Cell::Text(v) => v,
        Cell::Bool(v) => v,
    }
}

async fn tally(client: &mut Client) -> Result<Tally, StoreError> {
    let counts = client
        .query_one(
            "SELECT (SELECT count(*) FROM games), (SELECT count(*) FROM events),
                    (SELECT count(*) FROM users)",
            &[],
        )
        .await
        .map_err(pg_error)?;
    let rows = client.query(LAST_SEQS, &[]).await.map_err(pg_error)?;
    let mut last_seqs = std::collections::BTreeMap::new();
    for row in &rows {
        last_seqs.insert(col::<String>(row, 0)?, col::<i64>(row, 1)?.unsigned_abs());
    }
    let rows = client.query(ACCOUNTS, &[]).await.map_err(pg_error)?;
    let mut accounts = std::collections::BTreeMap::new();
    for row in &rows {
        accounts.insert(col::<String>(row, 0)?, col::<String>(row, 1)?);
    }
    Ok(Tally {
        accounts,
        games: col::<i64>(&counts, 0)?.unsigned_abs(),
        events: col::<i64>(&counts, 1)?.unsigned_abs(),
        users: col::<i64>(&counts, 2)?.unsigned_abs(),
        last_seqs,
    })
}
