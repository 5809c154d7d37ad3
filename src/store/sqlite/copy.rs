//! The SQLite side of `tengen store migrate`: every row of a table, and the tally the
//! copy is checked against.

use rusqlite::types::ValueRef;

use super::SqliteStore;
use crate::store::StoreError;
use crate::store::copy::{ACCOUNTS, Cell, Kind, LAST_SEQS, Table, Tally};

impl SqliteStore {
    /// Every row of `table`, its columns in the table's order.
    pub(crate) fn export_rows(&self, table: &Table) -> Result<Vec<Vec<Cell>>, StoreError> {
        let columns: Vec<String> = table
            .columns
            .iter()
            .map(|(name, _)| match (table.id_is_rowid, *name) {
                (true, "id") => "rowid".to_owned(),
                // A live game's count is on its events here, in the row in PostgreSQL.
                (_, "move_count") if table.name == "games" => super::games::move_count_column(),
                _ => format!("\"{name}\""),
            })
            .collect();
        let sql = format!("SELECT {} FROM {}", columns.join(", "), table.name);
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn.prepare(&sql).map_err(&db)?;
        let mut rows = stmt.query([]).map_err(&db)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(&db)? {
            let mut cells = Vec::with_capacity(table.columns.len());
            for (i, (name, kind)) in table.columns.iter().enumerate() {
                let value = row.get_ref(i).map_err(&db)?;
                cells.push(cell(value, *kind).ok_or_else(|| StoreError::BadRow {
                    path: self.path.clone(),
                    detail: format!("{}.{name} holds {value:?}", table.name),
                })?);
            }
            out.push(cells);
        }
        Ok(out)
    }

    /// How many games, events and users there are, and each game's last seq.
    pub(crate) fn tally(&self) -> Result<Tally, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let count = |table: &str| -> Result<u64, StoreError> {
            conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                row.get::<_, i64>(0)
            })
            .map(i64::unsigned_abs)
            .map_err(&db)
        };
        let (games, events, users) = (count("games")?, count("events")?, count("users")?);
        let mut stmt = conn.prepare(LAST_SEQS).map_err(&db)?;
        let last_seqs = stmt
            .query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?.unsigned_abs(),
                ))
            })
            .map_err(&db)?
            .collect::<Result<_, _>>()
            .map_err(&db)?;
        let mut stmt = conn.prepare(ACCOUNTS).map_err(&db)?;
        let accounts = stmt
            .query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(&db)?
            .collect::<Result<_, _>>()
            .map_err(&db)?;
        Ok(Tally {
            games,
            events,
            users,
            last_seqs,
            accounts,
        })
    }
}

/// A SQLite value as a cell of `kind`; None when the value is of another type.
fn cell(value: ValueRef<'_>, kind: Kind) -> Option<Cell> {
    Some(match (kind, value) {
        (Kind::Int, ValueRef::Null) => Cell::Int(None),
        (Kind::Int, ValueRef::Integer(n)) => Cell::Int(Some(n)),
        (Kind::Real, ValueRef::Null) => Cell::Real(None),
        (Kind::Real, ValueRef::Real(x)) => Cell::Real(Some(x)),
        // SQLite may keep a whole REAL as an integer.
        (Kind::Real, ValueRef::Integer(n)) => Cell::Real(Some(n as f64)),
        (Kind::Text, ValueRef::Null) => Cell::Text(None),
        (Kind::Text, ValueRef::Text(t)) => Cell::Text(Some(String::from_utf8(t.to_vec()).ok()?)),
        (Kind::Bool, ValueRef::Null) => Cell::Bool(None),
        (Kind::Bool, ValueRef::Integer(n)) => Cell::Bool(Some(n != 0)),
        _ => return None,
    })
}
