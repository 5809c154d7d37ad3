//! Every game of an event as one ZIP archive of SGF files. SGF is small text, so the
//! archive is stored, not deflated: about forty lines of headers instead of a compression
//! dependency, and any unzip reads it. File names are UTF-8 (general purpose flag 11);
//! every entry is dated 1980-01-01, the format's first day, since a pure function reads
//! no clock.

use std::collections::HashSet;

/// Why an archive could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    #[error("the file name {0:?} is not a plain relative path")]
    BadName(String),
    #[error("the file name {0:?} is given twice")]
    Duplicate(String),
    #[error("an archive holds at most 65,535 files and 4 GiB")]
    TooLarge,
}

const LOCAL: u32 = 0x0403_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const END: u32 = 0x0605_4b50;
/// Version 2.0 of the format, the first with folders; enough for stored files.
const VERSION: u16 = 20;
const UTF8_NAMES: u16 = 1 << 11;
/// 1980-01-01 in MS-DOS date format: (year − 1980) << 9 | month << 5 | day.
const DOS_DATE: u16 = (1 << 5) | 1;

/// One ZIP archive of `games`, each a (file name, SGF text) pair, in the order given.
pub fn sgf_archive(games: &[(String, String)]) -> Result<Vec<u8>, ArchiveError> {
    if games.len() > usize::from(u16::MAX) {
        return Err(ArchiveError::TooLarge);
    }
    let mut names = HashSet::new();
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, text) in games {
        let plain = !name.is_empty()
            && name.len() <= usize::from(u16::MAX)
            && !name.starts_with('/')
            && !name.contains('\\')
            && !name
                .split('/')
                .any(|part| part.is_empty() || part == "." || part == "..");
        if !plain {
            return Err(ArchiveError::BadName(name.clone()));
        }
        if !names.insert(name.as_str()) {
            return Err(ArchiveError::Duplicate(name.clone()));
        }
        let data = text.as_bytes();
        let size = u32::try_from(data.len()).map_err(|_| ArchiveError::TooLarge)?;
        let offset = u32::try_from(out.len()).map_err(|_| ArchiveError::TooLarge)?;
        let crc = crc32fast::hash(data);
        let name_len = name.len() as u16;

        put32(&mut out, LOCAL);
        common(&mut out, crc, size, name_len);
        put16(&mut out, 0); // extra field length
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);

        put32(&mut central, CENTRAL);
        put16(&mut central, VERSION); // made by
        common(&mut central, crc, size, name_len);
        for _ in 0..4 {
            put16(&mut central, 0); // extra, comment, disk, internal attributes
        }
        put32(&mut central, 0); // external attributes
        put32(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
    }
    let central_at = u32::try_from(out.len()).map_err(|_| ArchiveError::TooLarge)?;
    let central_size = u32::try_from(central.len()).map_err(|_| ArchiveError::TooLarge)?;
    central_at
        .checked_add(central_size)
        .ok_or(ArchiveError::TooLarge)?;
    out.extend_from_slice(&central);
    put32(&mut out, END);
    put16(&mut out, 0); // this disk
    put16(&mut out, 0); // the disk the directory starts on
    put16(&mut out, games.len() as u16);
    put16(&mut out, games.len() as u16);
    put32(&mut out, central_size);
    put32(&mut out, central_at);
    put16(&mut out, 0); // comment length
    Ok(out)
}

/// The fields a local header and a directory entry share, from "version needed" to the
/// name's length.
fn common(out: &mut Vec<u8>, crc: u32, size: u32, name_len: u16) {
    put16(out, VERSION);
    put16(out, UTF8_NAMES);
    put16(out, 0); // stored
    put16(out, 0); // time
    put16(out, DOS_DATE);
    put32(out, crc);
    put32(out, size); // compressed
    put32(out, size);
    put16(out, name_len);
}

fn put16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python's zipfile, an independent reader (tests/zip/read.py), lists the archive,
    /// checks every CRC and gives back each file's text.
    #[test]
    fn python_reads_the_archive_back() {
        let games = vec![
            (
                "round-1/board-1.sgf".to_string(),
                "(;GM[1]FF[4]SZ[19];B[pd];W[dp])".to_string(),
            ),
            (
                "round-1/棋譜-2.sgf".to_string(),
                "(;GM[1]FF[4]PB[黒]PW[白])".to_string(),
            ),
            ("empty.sgf".to_string(), String::new()),
        ];
        let bytes = sgf_archive(&games).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.zip");
        std::fs::write(&path, &bytes).unwrap();
        let out = std::process::Command::new("python3")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/zip/read.py"))
            .arg(&path)
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let read: Vec<(String, String)> = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(read, games);
    }

    #[test]
    fn unsafe_or_repeated_names_are_refused() {
        let one = |name: &str| vec![(name.to_string(), "(;)".to_string())];
        for name in [
            "",
            "/abs.sgf",
            "../up.sgf",
            "a//b.sgf",
            "a\\b.sgf",
            "a/./b.sgf",
        ] {
            assert_eq!(
                sgf_archive(&one(name)),
                Err(ArchiveError::BadName(name.into()))
            );
        }
        let twice = vec![
            ("a.sgf".to_string(), "(;)".to_string()),
            ("a.sgf".to_string(), "(;)".to_string()),
        ];
        assert_eq!(
            sgf_archive(&twice),
            Err(ArchiveError::Duplicate("a.sgf".into()))
        );
        // An empty archive is just the end record, and valid.
        assert_eq!(sgf_archive(&[]).unwrap().len(), 22);
    }
}
