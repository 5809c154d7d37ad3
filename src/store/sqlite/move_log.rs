//! The live-move log: where the group commit puts plain events in `full` mode instead of
//! SQLite, and where the checkpointer thread later copies them from, many at a time.
//!
//! Why: SQLite stores each game's events on a leaf page of their own, so an event cost a
//! 4 KiB page written to its log (often read back first, 1,500 games' leaves not fitting
//! its cache), a checksum over that page, and the page again at the checkpoint: with
//! plain moves here a loaded server used 19.3-19.5 s of CPU where it had used 22.0-26.6
//! s (BENCHMARKS.md, "Issue 17, twelfth pass"). Here an event costs
//! its own bytes and a CRC, plus its share of the group's one `fdatasync`; every few
//! seconds the events go into SQLite in one transaction sorted by game, where a game's
//! leaf takes all its new events in one write.
//!
//! On disk: two files beside the database, `<db>-moves-0` and `<db>-moves-1`, written in
//! turn. Each starts with a header (magic, generation) and holds records
//! `[body length u32][CRC-32 u32][body]`, the CRC taken over the generation and the
//! body, so a torn record, zeros, or a record left from an older generation ends the
//! file's valid part. A file is written from its start again only after SQLite durably
//! holds every event in it ([`MoveLog::folded`]). Opening the store copies both files'
//! events into SQLite, skipping those already there, and empties the files.
//!
//! Only the process holding `<db>-moves.lock` uses the log; a second process opening
//! the same database (an operator's command beside a running server) writes straight to
//! SQLite and leaves the files alone.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::store::EventRecord;

const MAGIC: &[u8; 8] = b"TGNMOVE1";
const HEADER: u64 = 16;
/// A record's length and CRC.
const RECORD_HEAD: usize = 8;
/// Zeros written ahead of the records, so that a record overwrites blocks the file
/// already has and its `fdatasync` need not also commit the file's new size.
const FILL_AHEAD: u64 = 1 << 20;
/// Events that make a copy into SQLite due: with 1,500 games at a move a second, about
/// five a game, so that a game's leaf is written once for several moves.
const FOLD_RECORDS: usize = 8192;
/// A quieter server copies its events this long after the first one was logged.
const FOLD_AGE: Duration = Duration::from_secs(10);
/// Events past which the log takes no more (the group commit writes to SQLite, copying
/// a game's logged events first): the bound on memory if copies keep failing.
const MAX_UNFOLDED: usize = 1 << 16;
/// A body longer than this is not a record of ours (the file's valid part ends there).
const MAX_BODY: u32 = 16 << 20;

/// An event as logged: the event and the game's move count after it, if it ends a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Logged {
    pub(super) event: EventRecord,
    pub(super) move_count: Option<u32>,
}

/// The logged events SQLite does not hold yet, by game, each game's in `seq` order.
#[derive(Debug, Default)]
struct Unfolded {
    games: HashMap<String, Vec<Logged>>,
    count: usize,
}

impl Unfolded {
    fn push(&mut self, logged: Logged) {
        self.count += 1;
        match self.games.get_mut(&logged.event.game_id) {
            Some(events) => events.push(logged),
            None => {
                self.games
                    .insert(logged.event.game_id.clone(), vec![logged]);
            }
        }
    }

    /// Drops the game's events up to `seq`: SQLite holds them now.
    fn remove_through(&mut self, game_id: &str, seq: u64) {
        let Some(events) = self.games.get_mut(game_id) else {
            return;
        };
        let before = events.len();
        events.retain(|l| l.event.seq > seq);
        self.count -= before - events.len();
        if events.is_empty() {
            self.games.remove(game_id);
        }
    }

    fn all(&self) -> Vec<Logged> {
        let mut all: Vec<Logged> = self.games.values().flatten().cloned().collect();
        all.sort_by(|a, b| (&a.event.game_id, a.event.seq).cmp(&(&b.event.game_id, b.event.seq)));
        all
    }
}

/// One of the two files.
struct LogFile {
    path: PathBuf,
    file: Arc<File>,
    /// Bytes at its start that hold records or zeros, so writing there allocates nothing.
    filled: u64,
}

struct State {
    files: [LogFile; 2],
    active: usize,
    generation: u64,
    /// Where the next record goes in the active file.
    offset: u64,
    /// The other file still holds events SQLite may not durably have.
    other_busy: bool,
    /// Written since the last [`MoveLog::sync`].
    unsynced: [bool; 2],
    /// When the oldest unfolded event was logged.
    since: Option<Instant>,
    unfolded: Unfolded,
}

/// The log and the events in it that SQLite does not hold yet.
pub(super) struct MoveLog {
    state: Mutex<State>,
    /// Holds `<db>-moves.lock` for as long as the log is in use.
    _lock: File,
}

/// What opening found: the log, and the events its files held, oldest generation first.
pub(super) struct Opened {
    pub(super) log: MoveLog,
    pub(super) recovered: Vec<Logged>,
}

impl MoveLog {
    /// Takes the log of the database at `db`; None when another process holds it.
    pub(super) fn open(db: &Path) -> io::Result<Option<Opened>> {
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(side_path(db, "-moves.lock"))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        let open = |i: usize| -> io::Result<LogFile> {
            let path = side_path(db, &format!("-moves-{i}"));
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)?;
            Ok(LogFile {
                path,
                file: Arc::new(file),
                filled: 0,
            })
        };
        let files = [open(0)?, open(1)?];
        let mut found = Vec::new();
        for log in &files {
            let bytes = std::fs::read(&log.path)?;
            if let Some((generation, events)) = decode_file(&bytes) {
                found.push((generation, events));
            }
        }
        found.sort_by_key(|(generation, _)| *generation);
        let generation = found.last().map_or(0, |(g, _)| *g) + 1;
        let recovered = found.into_iter().flat_map(|(_, events)| events).collect();
        let state = State {
            files,
            active: 0,
            generation,
            offset: HEADER,
            other_busy: false,
            unsynced: [false; 2],
            since: None,
            unfolded: Unfolded::default(),
        };
        Ok(Some(Opened {
            log: MoveLog {
                state: Mutex::new(state),
                _lock: lock,
            },
            recovered,
        }))
    }

    fn state(&self) -> io::Result<MutexGuard<'_, State>> {
        self.state
            .lock()
            .map_err(|_| io::Error::other("the move log's lock was poisoned"))
    }

    /// Empties both files and starts the active one: called once what they held is
    /// durably in SQLite (at open, after copying it in; at the end, after the last copy).
    pub(super) fn reset(&self) -> io::Result<()> {
        let mut state = self.state()?;
        for log in &mut state.files {
            log.file.set_len(0)?;
            log.filled = 0;
        }
        state.other_busy = false;
        state.unsynced = [false; 2];
        let (active, generation) = (state.active, state.generation);
        write_header(&mut state.files[active], generation)?;
        state.offset = HEADER;
        for log in &state.files {
            log.file.sync_all()?;
        }
        sync_directory_of(&state.files[0].path)
    }

    /// Whether the log is past [`MAX_UNFOLDED`] and takes no more events.
    pub(super) fn is_full(&self) -> bool {
        self.state()
            .map(|s| s.unfolded.count >= MAX_UNFOLDED)
            .unwrap_or(true)
    }

    /// Writes `events` after the last ones (not yet flushed: [`MoveLog::sync`]). On an
    /// error nothing counts as logged.
    pub(super) fn append(&self, events: Vec<Logged>) -> io::Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let mut state = self.state()?;
        let mut bytes = Vec::with_capacity(events.len() * 160);
        for logged in &events {
            encode(&mut bytes, state.generation, logged);
        }
        let (active, offset) = (state.active, state.offset);
        let end = offset + bytes.len() as u64;
        let log = &mut state.files[active];
        while log.filled < end {
            log.file
                .write_all_at(&vec![0; FILL_AHEAD as usize], log.filled)?;
            log.filled += FILL_AHEAD;
        }
        log.file.write_all_at(&bytes, offset)?;
        state.offset = end;
        state.unsynced[active] = true;
        state.since.get_or_insert_with(Instant::now);
        for logged in events {
            state.unfolded.push(logged);
        }
        Ok(())
    }

    /// Flushes what was written since the last flush (`fdatasync`), in either file.
    pub(super) fn sync(&self) -> io::Result<()> {
        let files: Vec<Arc<File>> = {
            let mut state = self.state()?;
            let unsynced = std::mem::take(&mut state.unsynced);
            (0..2)
                .filter(|&i| unsynced[i])
                .map(|i| state.files[i].file.clone())
                .collect()
        };
        files.iter().try_for_each(|file| file.sync_data())
    }

    /// The game's last logged event number, if SQLite does not hold it yet.
    pub(super) fn last_seq(&self, game_id: &str) -> io::Result<Option<u64>> {
        Ok(self
            .state()?
            .unfolded
            .games
            .get(game_id)
            .and_then(|e| e.last())
            .map(|l| l.event.seq))
    }

    /// The game's move count after its last logged event that carries one.
    pub(super) fn last_move_count(&self, game_id: &str) -> io::Result<Option<u32>> {
        Ok(self
            .state()?
            .unfolded
            .games
            .get(game_id)
            .and_then(|events| events.iter().rev().find_map(|l| l.move_count)))
    }

    /// The game's logged events in `seqs`.
    pub(super) fn events(&self, game_id: &str, seqs: Range<u64>) -> io::Result<Vec<EventRecord>> {
        Ok(self
            .state()?
            .unfolded
            .games
            .get(game_id)
            .map(|events| {
                events
                    .iter()
                    .filter(|l| seqs.contains(&l.event.seq))
                    .map(|l| l.event.clone())
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The logged events of these games, to be copied into SQLite before anything else
    /// is written about them.
    pub(super) fn of_games<'a>(
        &self,
        games: impl IntoIterator<Item = &'a str>,
    ) -> io::Result<Vec<Logged>> {
        let state = self.state()?;
        let mut out = Vec::new();
        for game in games {
            if let Some(events) = state.unfolded.games.get(game) {
                out.extend(events.iter().cloned());
            }
        }
        Ok(out)
    }

    /// SQLite has committed these events (not necessarily flushed): reads take them from
    /// there now. The files keep them until [`MoveLog::folded`].
    pub(super) fn forget(&self, copied: &[Logged]) -> io::Result<()> {
        let mut state = self.state()?;
        for logged in copied {
            state
                .unfolded
                .remove_through(&logged.event.game_id, logged.event.seq);
        }
        if state.unfolded.count == 0 {
            state.since = None;
        }
        Ok(())
    }

    /// The events to copy into SQLite now, if a copy is due (or `all`), oldest game
    /// first. When the other file is free, later events go there from now on, so that
    /// once these are copied the file they are in can be written again.
    pub(super) fn fold_due(&self, all: bool) -> io::Result<Option<Vec<Logged>>> {
        let mut state = self.state()?;
        let count = state.unfolded.count;
        let due = count >= FOLD_RECORDS || state.since.is_some_and(|t| t.elapsed() >= FOLD_AGE);
        if count == 0 || !(due || all) {
            return Ok(None);
        }
        if !state.other_busy {
            let next = 1 - state.active;
            let generation = state.generation + 1;
            write_header(&mut state.files[next], generation)?;
            state.unsynced[next] = true;
            state.active = next;
            state.generation = generation;
            state.offset = HEADER;
            state.other_busy = true;
        }
        state.since = None;
        Ok(Some(state.unfolded.all()))
    }

    /// A copy from [`MoveLog::fold_due`] is committed and flushed: its events leave
    /// memory, and the file it came from may be written again.
    pub(super) fn folded(&self, copied: &[Logged]) -> io::Result<()> {
        self.forget(copied)?;
        let mut state = self.state()?;
        state.other_busy = false;
        if state.unfolded.count > 0 {
            state.since.get_or_insert_with(Instant::now);
        }
        Ok(())
    }
}

/// The log's files, as error messages name them.
pub(super) fn files_of(db: &Path) -> PathBuf {
    side_path(db, "-moves-*")
}

/// The file beside the database `db` whose name is the database's and `suffix`.
pub(super) fn side_path(db: &Path, suffix: &str) -> PathBuf {
    let mut path = db.as_os_str().to_owned();
    path.push(suffix);
    path.into()
}

/// Flushes the directory holding `file`, so that the file's name survives a power loss.
#[cfg(unix)]
pub(super) fn sync_directory_of(file: &Path) -> io::Result<()> {
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)?.sync_all()
}

/// Elsewhere a directory cannot be opened and flushed like a file; the name is left to
/// the file system.
#[cfg(not(unix))]
pub(super) fn sync_directory_of(_file: &Path) -> io::Result<()> {
    Ok(())
}

fn write_header(log: &mut LogFile, generation: u64) -> io::Result<()> {
    let mut header = [0u8; HEADER as usize];
    header[..8].copy_from_slice(MAGIC);
    header[8..].copy_from_slice(&generation.to_le_bytes());
    log.file.write_all_at(&header, 0)?;
    log.filled = log.filled.max(HEADER);
    Ok(())
}

fn checksum(generation: u64, body: &[u8]) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&generation.to_le_bytes());
    crc.update(body);
    crc.finalize()
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Appends one record.
fn encode(out: &mut Vec<u8>, generation: u64, logged: &Logged) {
    let start = out.len();
    out.extend_from_slice(&[0; RECORD_HEAD]);
    let e = &logged.event;
    put_str(out, &e.game_id);
    out.extend_from_slice(&e.seq.to_le_bytes());
    out.extend_from_slice(&e.at_ms.to_le_bytes());
    let count = logged.move_count.map_or(0, |c| u64::from(c) + 1);
    out.extend_from_slice(&count.to_le_bytes());
    put_str(out, &e.kind);
    put_str(out, &e.payload);
    let body = start + RECORD_HEAD;
    let len = (out.len() - body) as u32;
    let crc = checksum(generation, &out[body..]);
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    out[start + 4..body].copy_from_slice(&crc.to_le_bytes());
}

/// Reads a body written by [`encode`].
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn string(&mut self) -> Option<String> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }
}

fn decode(body: &[u8]) -> Option<Logged> {
    let mut r = Reader(body);
    let game_id = r.string()?;
    let seq = r.u64()?;
    let at_ms = r.u64()? as i64;
    let count = r.u64()?;
    let kind = r.string()?;
    let payload = r.string()?;
    let move_count = match count {
        0 => None,
        n => Some(u32::try_from(n - 1).ok()?),
    };
    r.0.is_empty().then_some(Logged {
        event: EventRecord {
            game_id,
            seq,
            kind,
            payload,
            at_ms,
        },
        move_count,
    })
}

/// A file's generation and its valid records, in order; None without a valid header.
fn decode_file(bytes: &[u8]) -> Option<(u64, Vec<Logged>)> {
    let header = bytes.get(..HEADER as usize)?;
    if &header[..8] != MAGIC {
        return None;
    }
    let generation = u64::from_le_bytes(header[8..].try_into().ok()?);
    let mut events = Vec::new();
    let mut at = HEADER as usize;
    while let Some(head) = bytes.get(at..at + RECORD_HEAD) {
        let len = u32::from_le_bytes(head[..4].try_into().ok()?);
        let crc = u32::from_le_bytes(head[4..].try_into().ok()?);
        if len == 0 || len > MAX_BODY {
            break;
        }
        let start = at + RECORD_HEAD;
        let Some(body) = bytes.get(start..start + len as usize) else {
            break;
        };
        if checksum(generation, body) != crc {
            break;
        }
        let Some(logged) = decode(body) else {
            break;
        };
        events.push(logged);
        at = start + len as usize;
    }
    Some((generation, events))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(game: &str, seq: u64, move_count: Option<u32>) -> Logged {
        Logged {
            event: EventRecord {
                game_id: game.into(),
                seq,
                kind: "move_played".into(),
                payload: format!("{{\"n\":{seq}}}"),
                at_ms: 1_700_000_000_000 + seq as i64,
            },
            move_count,
        }
    }

    fn file_of(generation: u64, events: &[Logged]) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&generation.to_le_bytes());
        for e in events {
            encode(&mut bytes, generation, e);
        }
        bytes
    }

    #[test]
    fn records_read_back_as_written() {
        let events = vec![
            logged("a", 1, None),
            logged("b", 7, Some(0)),
            logged("a", 2, Some(12)),
        ];
        assert_eq!(decode_file(&file_of(3, &events)), Some((3, events)));
    }

    #[test]
    fn a_torn_record_zeros_or_garbage_end_the_valid_part() {
        let events = vec![logged("a", 1, None), logged("a", 2, Some(1))];
        let whole = file_of(1, &events);
        let first = file_of(1, &events[..1]).len();
        for cut in first..whole.len() {
            assert_eq!(
                decode_file(&whole[..cut]),
                Some((1, events[..1].to_vec())),
                "cut at {cut}"
            );
        }
        let mut zeros = whole.clone();
        zeros.extend_from_slice(&[0; 64]);
        assert_eq!(decode_file(&zeros), Some((1, events.clone())));
        let mut flipped = whole.clone();
        *flipped.last_mut().expect("bytes") ^= 1;
        assert_eq!(decode_file(&flipped), Some((1, events[..1].to_vec())));
        assert_eq!(decode_file(b"not a log at all"), None);
    }

    #[test]
    fn records_left_from_an_older_generation_are_not_read() {
        // A file written from its start again: a new header over an older generation's
        // records, of which the new generation wrote only the first.
        let old = file_of(1, &[logged("a", 1, None), logged("a", 2, None)]);
        let new = file_of(2, &[logged("b", 1, None)]);
        let mut reused = old.clone();
        reused[..new.len()].copy_from_slice(&new);
        assert_eq!(decode_file(&reused), Some((2, vec![logged("b", 1, None)])));
    }

    #[test]
    fn a_second_process_does_not_get_the_log() {
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("games.sqlite");
        let first = MoveLog::open(&db).expect("open").expect("free");
        assert!(MoveLog::open(&db).expect("open").is_none());
        drop(first);
        assert!(MoveLog::open(&db).expect("open").is_some());
    }

    #[test]
    fn appended_events_survive_reopening_and_a_copy_moves_to_the_other_file() {
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("games.sqlite");
        let opened = MoveLog::open(&db).expect("open").expect("free");
        assert!(opened.recovered.is_empty());
        let log = opened.log;
        log.reset().expect("reset");
        log.append(vec![logged("a", 1, None), logged("b", 1, Some(1))])
            .expect("append");
        log.sync().expect("sync");
        let copy = log.fold_due(true).expect("fold").expect("due");
        assert_eq!(copy.len(), 2);
        // Later events go to the other file while the copy is in flight.
        log.append(vec![logged("a", 2, Some(1))]).expect("append");
        log.sync().expect("sync");
        assert_eq!(log.last_seq("a").expect("seq"), Some(2));
        assert_eq!(log.events("a", 1..3).expect("events").len(), 2);
        log.folded(&copy).expect("folded");
        assert_eq!(log.events("a", 1..3).expect("events").len(), 1);
        assert_eq!(log.last_move_count("b").expect("count"), None);
        drop(log);
        // Both files are read back, the older generation first.
        let again = MoveLog::open(&db).expect("open").expect("free");
        let seqs: Vec<(String, u64)> = again
            .recovered
            .iter()
            .map(|l| (l.event.game_id.clone(), l.event.seq))
            .collect();
        assert_eq!(seqs, [("a".into(), 1), ("b".into(), 1), ("a".into(), 2)]);
        again.log.reset().expect("reset");
        drop(again);
        assert!(
            MoveLog::open(&db)
                .expect("open")
                .expect("free")
                .recovered
                .is_empty()
        );
    }
}
