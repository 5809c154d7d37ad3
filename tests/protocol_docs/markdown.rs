//! What the docs' tests read from markdown besides the examples: the headings (and the
//! anchors GitHub makes of them) and the tables, each under the heading it belongs to.

use std::collections::BTreeSet;

/// A heading, outside fenced blocks.
pub struct Heading {
    pub line: usize,
    pub level: usize,
    pub text: String,
}

/// One table: where it is, and its rows (the header and the `---` line left out).
pub struct Table {
    pub line: usize,
    /// The text of the nearest heading above it.
    pub heading: String,
    pub rows: Vec<Row>,
}

pub struct Row {
    pub line: usize,
    /// The whole row, as written.
    pub text: String,
    /// The names in backticks in its first cell.
    pub names: Vec<String>,
}

/// The lines outside fenced blocks, with their numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

pub fn headings(text: &str) -> Vec<Heading> {
    prose(text)
        .into_iter()
        .filter_map(|(line, l)| {
            let level = l.bytes().take_while(|&b| b == b'#').count();
            let rest = l.get(level..)?.strip_prefix(' ')?;
            (level > 0).then(|| Heading {
                line,
                level,
                text: rest.trim().to_string(),
            })
        })
        .collect()
}

/// The anchors a link may point at: GitHub's slug of every heading (`-1`, `-2` … for
/// repeats) and every `<a id="…">`.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for heading in headings(text) {
        let slug = slug(&heading.text);
        let mut anchor = slug.clone();
        let mut n = 0;
        while out.contains(&anchor) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
        out.insert(anchor);
    }
    for part in text.split("<a id=\"").skip(1) {
        if let Some((id, _)) = part.split_once('"') {
            out.insert(id.to_string());
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped,
/// spaces made `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every code span (`…`) outside fenced blocks, with its line.
pub fn code_spans(text: &str) -> Vec<(usize, String)> {
    prose(text)
        .into_iter()
        .flat_map(|(line, l)| spans(l).into_iter().map(move |s| (line, s)))
        .collect()
}

/// The code spans of one line.
fn spans(line: &str) -> Vec<String> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Every table of a file.
pub fn tables(text: &str) -> Vec<Table> {
    let mut out: Vec<Table> = Vec::new();
    let mut heading = String::new();
    let lines = prose(text);
    let mut i = 0;
    while i < lines.len() {
        let (line, l) = lines[i];
        if l.starts_with('#') {
            heading = l.trim_start_matches('#').trim().to_string();
        }
        let starts = l.starts_with('|')
            && lines
                .get(i + 1)
                .is_some_and(|(_, next)| next.starts_with("| ---"));
        if !starts {
            i += 1;
            continue;
        }
        let mut table = Table {
            line,
            heading: heading.clone(),
            rows: Vec::new(),
        };
        i += 2;
        while let Some(&(line, row)) = lines.get(i).filter(|(_, l)| l.starts_with('|')) {
            let first = row[1..].split('|').next().unwrap_or_default();
            table.rows.push(Row {
                line,
                text: row.to_string(),
                names: spans(first),
            });
            i += 1;
        }
        out.push(table);
    }
    out
}
