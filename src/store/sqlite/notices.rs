//! The SQLite side of [`NoticeStore`].

use rusqlite::{OptionalExtension, Row, params};

use super::SqliteStore;
use crate::store::{MailPrefs, NewNotice, NoticeRow, NoticeStore, StoreError};

const NOTICE_COLUMNS: &str = "id, account, kind, payload, at_ms, read";

fn notice(row: &Row) -> rusqlite::Result<NoticeRow> {
    Ok(NoticeRow {
        // Ids are SQLite rowids, never negative.
        id: row.get::<_, i64>(0)? as u64,
        account: row.get(1)?,
        kind: row.get(2)?,
        payload: row.get(3)?,
        at_ms: row.get(4)?,
        read: row.get(5)?,
    })
}

/// An id as SQLite's integer, saturating: none comes near 2^63.
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl NoticeStore for SqliteStore {
    fn add_notice(&self, n: &NewNotice, keep: u32) -> Result<u64, StoreError> {
        let mut conn = self.lock()?;
        let db = self.db_err();
        let tx = conn.transaction().map_err(&db)?;
        tx.prepare_cached(
            "INSERT INTO notices (account, kind, payload, at_ms, digest) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(&db)?
        .execute(params![n.account, n.kind, n.payload, n.at_ms, n.digest])
        .map_err(&db)?;
        let id = tx.last_insert_rowid();
        tx.prepare_cached(
            "DELETE FROM notices WHERE account = ?1 AND id <= (
                 SELECT id FROM notices WHERE account = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        )
        .map_err(&db)?
        .execute(params![n.account, keep])
        .map_err(&db)?;
        tx.commit().map_err(&db)?;
        Ok(id as u64)
    }

    fn notices(
        &self,
        account: &str,
        before: Option<u64>,
        limit: u32,
    ) -> Result<Vec<NoticeRow>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {NOTICE_COLUMNS} FROM notices WHERE account = ?1 AND id < ?2
                 ORDER BY id DESC LIMIT ?3"
            ))
            .map_err(&db)?;
        let before = before.map_or(i64::MAX, int);
        let rows = stmt
            .query_map(params![account, before, limit], notice)
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn unread_notices(&self, account: &str) -> Result<u64, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let n: i64 = conn
            .prepare_cached("SELECT count(*) FROM notices WHERE account = ?1 AND NOT read")
            .map_err(&db)?
            .query_row(params![account], |row| row.get(0))
            .map_err(&db)?;
        Ok(n as u64)
    }

    fn mark_notices_read(&self, account: &str, up_to: u64) -> Result<u64, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let n = conn
            .prepare_cached(
                "UPDATE notices SET read = 1 WHERE account = ?1 AND id <= ?2 AND NOT read",
            )
            .map_err(&db)?
            .execute(params![account, int(up_to)])
            .map_err(&db)?;
        Ok(n as u64)
    }

    fn mail_prefs(&self, account: &str) -> Result<Option<MailPrefs>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        conn.prepare_cached(
            "SELECT account, address, verified, modes, last_digest_ms FROM mail_prefs
             WHERE account = ?1",
        )
        .map_err(&db)?
        .query_row(params![account], |row| {
            Ok(MailPrefs {
                account: row.get(0)?,
                address: row.get(1)?,
                verified: row.get(2)?,
                modes: row.get(3)?,
                last_digest_ms: row.get(4)?,
            })
        })
        .optional()
        .map_err(&db)
    }

    fn set_mail_prefs(&self, p: &MailPrefs) -> Result<(), StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        conn.prepare_cached(
            "INSERT INTO mail_prefs (account, address, verified, modes, last_digest_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (account) DO UPDATE SET address = ?2, verified = ?3, modes = ?4,
                 last_digest_ms = ?5",
        )
        .map_err(&db)?
        .execute(params![
            p.account,
            p.address,
            p.verified,
            p.modes,
            p.last_digest_ms
        ])
        .map_err(&db)?;
        Ok(())
    }

    fn digests_due(&self, sent_before_ms: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(
                "SELECT DISTINCT n.account FROM notices n
                 LEFT JOIN mail_prefs p ON p.account = n.account
                 WHERE n.digest AND (p.last_digest_ms IS NULL OR p.last_digest_ms <= ?1)
                 ORDER BY n.account LIMIT ?2",
            )
            .map_err(&db)?;
        let rows = stmt
            .query_map(params![sent_before_ms, limit], |row| row.get(0))
            .map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn digest_notices(&self, account: &str) -> Result<Vec<NoticeRow>, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {NOTICE_COLUMNS} FROM notices WHERE account = ?1 AND digest ORDER BY id"
            ))
            .map_err(&db)?;
        let rows = stmt.query_map(params![account], notice).map_err(&db)?;
        rows.collect::<Result<_, _>>().map_err(&db)
    }

    fn claim_digest(
        &self,
        account: &str,
        sent_before_ms: i64,
        at_ms: i64,
    ) -> Result<bool, StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        let n = conn
            .prepare_cached(
                "INSERT INTO mail_prefs (account, modes, last_digest_ms) VALUES (?1, '{}', ?3)
                 ON CONFLICT (account) DO UPDATE SET last_digest_ms = ?3
                 WHERE last_digest_ms IS NULL OR last_digest_ms <= ?2",
            )
            .map_err(&db)?
            .execute(params![account, sent_before_ms, at_ms])
            .map_err(&db)?;
        Ok(n == 1)
    }

    fn digest_sent(&self, account: &str, up_to: u64) -> Result<(), StoreError> {
        let conn = self.lock()?;
        let db = self.db_err();
        conn.prepare_cached("UPDATE notices SET digest = 0 WHERE account = ?1 AND id <= ?2")
            .map_err(&db)?
            .execute(params![account, int(up_to)])
            .map_err(&db)?;
        Ok(())
    }
}
