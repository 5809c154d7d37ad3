//! SGF FF[4] game records (<https://www.red-bean.com/sgf/>): a hand-written reader, a typed
//! view of what a Go server needs ([`GameRecord`]) and a writer. Text in, text out: this
//! module never touches a file.
//!
//! Two layers. [`parse`] turns a collection into the main line (the first child at every
//! branch) of each game tree, as [`Node`]s of raw [`Property`] values: escapes are kept,
//! so a property this module does not understand is written back byte for byte.
//! [`GameRecord`] reads the properties that decide a game (board size, komi, handicap,
//! setup, moves) strictly, because a count depends on them, reads the descriptive ones
//! (players, result, date, times) leniently, and keeps everything else in order.

use std::fmt::{self, Write as _};

use super::points::HalfPoints;
use super::vertex::{Color, MAX_SIZE, MIN_SIZE, Move, Vertex};

/// Why an SGF text could not be read as a Go game record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SgfError {
    #[error("SGF is malformed at byte {at}: expected {expected}")]
    Malformed { at: usize, expected: String },
    #[error("the text holds no SGF game tree; a record starts with `(;`")]
    NoGameTree,
    #[error("GM[{0}] is not a Go record (Go is GM[1])")]
    NotGo(String),
    #[error("SZ[{0}] is not a board size tengen plays; use a square board from 2 to 25")]
    BadSize(String),
    #[error("{ident}[{value}] in node {node} is not a point of a {size}x{size} board")]
    BadPoint {
        ident: String,
        value: String,
        node: usize,
        size: u8,
    },
    #[error("{ident}[{value}] is not {expected}")]
    BadValue {
        ident: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("node {node} holds both a black and a white move")]
    TwoMoves { node: usize },
    #[error(
        "node {node} sets up stones ({ident}) after the first move; only the starting \
         position can be set up"
    )]
    LateSetup { node: usize, ident: String },
}

/// One property of a node: an identifier such as `KM` and its values exactly as written
/// between the brackets (escapes included, see [`Property::text`] to read them as text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// Upper-case letters only (FF[3] lower-case letters are dropped on reading).
    pub ident: String,
    /// The raw values, at least one; `""` for an empty value such as `B[]`.
    pub values: Vec<String>,
}

impl Property {
    /// A property whose values are already in SGF form (escaped where needed).
    pub fn raw<S: Into<String>>(ident: &str, values: impl IntoIterator<Item = S>) -> Property {
        Property {
            ident: ident.to_string(),
            values: values.into_iter().map(Into::into).collect(),
        }
    }

    /// A property of text values, escaped as SGF requires (`]` and `\`).
    pub fn from_text<S: AsRef<str>>(ident: &str, texts: impl IntoIterator<Item = S>) -> Property {
        Property {
            ident: ident.to_string(),
            values: texts.into_iter().map(|t| escape(t.as_ref())).collect(),
        }
    }

    /// The first value read as SGF Text: escapes removed, soft line breaks joined, line
    /// breaks kept as `\n`, other white space turned into spaces.
    pub fn text(&self) -> String {
        self.values
            .first()
            .map_or_else(String::new, |v| unescape(v, false))
    }

    /// The first value read as SGF SimpleText: like [`Property::text`], but line breaks
    /// become spaces too.
    pub fn simple_text(&self) -> String {
        self.values
            .first()
            .map_or_else(String::new, |v| unescape(v, true))
    }
}

/// One node of a game tree: its properties in the order the file gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    pub properties: Vec<Property>,
}

impl Node {
    /// The first property called `ident`, if any.
    pub fn get(&self, ident: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.ident == ident)
    }
}

/// Reads an SGF collection and returns the main line of each of its game trees, in
/// order: the nodes from the root down, taking the first variation at every branch.
/// Other variations are checked for syntax and dropped.
pub fn parse(sgf: &str) -> Result<Vec<Vec<Node>>, SgfError> {
    parse_bytes(sgf.as_bytes())
}

/// [`parse`] for bytes in any encoding: values are decoded as the root's `CA` says
/// (UTF-8 or ISO-8859-1); without `CA`, as UTF-8 when they are valid UTF-8 and as
/// ISO-8859-1 (the FF[4] default) otherwise.
pub fn parse_bytes(sgf: &[u8]) -> Result<Vec<Vec<Node>>, SgfError> {
    let mut reader = Reader { bytes: sgf, pos: 0 };
    // A UTF-8 byte order mark or mail headers may precede the first tree.
    reader.pos = sgf
        .iter()
        .position(|&b| b == b'(')
        .ok_or(SgfError::NoGameTree)?;
    let mut games = Vec::new();
    loop {
        reader.skip_whitespace();
        match reader.peek() {
            None => return Ok(games),
            Some(b'(') => {
                let raw = reader.game_tree()?;
                games.push(decode(sgf, raw));
            }
            Some(_) => return Err(reader.malformed("`(` to start another game tree, or the end")),
        }
    }
}

/// A property as the reader first sees it: byte ranges of the input.
struct RawProperty {
    ident: String,
    values: Vec<(usize, usize)>,
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn malformed(&self, expected: impl Into<String>) -> SgfError {
        SgfError::Malformed {
            at: self.pos,
            expected: expected.into(),
        }
    }

    /// Reads one game tree (the reader is on its `(`) and returns its main line.
    /// Iterative, so deeply nested variations cannot overflow the stack.
    fn game_tree(&mut self) -> Result<Vec<Vec<RawProperty>>, SgfError> {
        /// A tree that is open: whether it is on the main line, and whether a variation
        /// has started inside it (after which no more nodes may follow).
        struct Open {
            main: bool,
            has_child: bool,
        }
        let mut open: Vec<Open> = Vec::new();
        let mut main_line = Vec::new();
        loop {
            self.skip_whitespace();
            match self.peek() {
                Some(b'(') => {
                    let main = match open.last_mut() {
                        None => true,
                        Some(parent) => {
                            let first = !parent.has_child;
                            parent.has_child = true;
                            parent.main && first
                        }
                    };
                    open.push(Open {
                        main,
                        has_child: false,
                    });
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() != Some(b';') {
                        return Err(self.malformed("`;`: a game tree starts with a node"));
                    }
                }
                Some(b';') => {
                    let Some(tree) = open.last() else {
                        return Err(self.malformed("`(` before the first node"));
                    };
                    if tree.has_child {
                        return Err(self.malformed("`(` or `)`: no node may follow a variation"));
                    }
                    let main = tree.main;
                    self.pos += 1;
                    let node = self.node()?;
                    if main {
                        main_line.push(node);
                    }
                }
                Some(b')') if !open.is_empty() => {
                    self.pos += 1;
                    open.pop();
                    if open.is_empty() {
                        return Ok(main_line);
                    }
                }
                None => return Err(self.malformed("`)` to close the game tree")),
                Some(_) => return Err(self.malformed("a property, `;`, `(` or `)`")),
            }
        }
    }

    /// Reads the properties of a node (the reader is just past its `;`).
    fn node(&mut self) -> Result<Vec<RawProperty>, SgfError> {
        let mut properties = Vec::new();
        loop {
            self.skip_whitespace();
            if !self.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
                return Ok(properties);
            }
            let start = self.pos;
            let mut ident = String::new();
            while let Some(b) = self.peek().filter(u8::is_ascii_alphabetic) {
                // FF[3] allowed lower-case letters in identifiers (`AddBlack` is `AB`).
                if b.is_ascii_uppercase() {
                    ident.push(b as char);
                }
                self.pos += 1;
            }
            if ident.is_empty() {
                self.pos = start;
                return Err(self.malformed("a property identifier in upper-case letters"));
            }
            self.skip_whitespace();
            if self.peek() != Some(b'[') {
                return Err(self.malformed(format!("`[` to open a value of {ident}")));
            }
            let mut values = Vec::new();
            while self.peek() == Some(b'[') {
                values.push(self.value()?);
                self.skip_whitespace();
            }
            properties.push(RawProperty { ident, values });
        }
    }

    /// Reads one `[...]` value and returns the byte range between the brackets.
    fn value(&mut self) -> Result<(usize, usize), SgfError> {
        let open = self.pos;
        self.pos += 1;
        let start = self.pos;
        loop {
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok((start, self.pos - 1));
                }
                Some(b'\\') => self.pos = (self.pos + 2).min(self.bytes.len()),
                Some(_) => self.pos += 1,
                None => {
                    return Err(
                        self.malformed(format!("`]` to close the value opened at byte {open}"))
                    );
                }
            }
        }
    }
}

/// Turns byte ranges into strings, in the encoding the tree's root declares.
fn decode(bytes: &[u8], raw: Vec<Vec<RawProperty>>) -> Vec<Node> {
    let latin1 = raw
        .first()
        .and_then(|root| root.iter().find(|p| p.ident == "CA"))
        .and_then(|ca| ca.values.first())
        .is_some_and(|&(a, b)| {
            let name = String::from_utf8_lossy(&bytes[a..b])
                .to_ascii_lowercase()
                .replace(['-', '_', ' '], "");
            matches!(name.as_str(), "iso88591" | "latin1" | "l1")
        });
    let text = |(a, b): (usize, usize)| -> String {
        let slice = &bytes[a..b];
        match std::str::from_utf8(slice) {
            Ok(s) if !latin1 => s.to_string(),
            _ => slice.iter().map(|&c| c as char).collect(),
        }
    };
    raw.into_iter()
        .map(|node| Node {
            properties: node
                .into_iter()
                .map(|p| Property {
                    ident: p.ident,
                    values: p.values.into_iter().map(text).collect(),
                })
                .collect(),
        })
        .collect()
}

/// Escapes text for an SGF value: `\` and `]` get a backslash.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' || c == ']' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Reads a raw value as SGF Text (`simple = false`) or SimpleText (`simple = true`).
fn unescape(raw: &str, simple: bool) -> String {
    let line_break = if simple { ' ' } else { '\n' };
    // A line break is `\n`, `\r\n`, `\n\r` or `\r`: take its second half, if any.
    fn rest_of_break(c: char, chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
        let other = if c == '\n' { '\r' } else { '\n' };
        if chars.peek() == Some(&other) {
            chars.next();
        }
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                // A soft line break: the backslash and the break vanish.
                Some(b @ ('\n' | '\r')) => rest_of_break(b, &mut chars),
                Some(w) if w.is_whitespace() => out.push(' '),
                Some(other) => out.push(other),
                None => {}
            },
            '\n' | '\r' => {
                rest_of_break(c, &mut chars);
                out.push(line_break);
            }
            w if w.is_whitespace() => out.push(' '),
            other => out.push(other),
        }
    }
    out
}

/// A move of the main line with what the record says about it.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveNode {
    pub color: Color,
    pub mv: Move,
    /// Seconds left on the mover's clock after the move (`BL` or `WL`).
    pub time_left: Option<f64>,
    /// Byo-yomi periods or Canadian stones left to the mover (`OB` or `OW`).
    pub periods_left: Option<u32>,
    /// Every other property of the node (comments, marks, ...), in order.
    pub properties: Vec<Property>,
}

impl MoveNode {
    /// A move with nothing else recorded.
    pub fn new(color: Color, mv: Move) -> MoveNode {
        MoveNode {
            color,
            mv,
            time_left: None,
            periods_left: None,
            properties: Vec::new(),
        }
    }
}

/// A Go game record: the main line of an SGF game tree, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct GameRecord {
    /// `SZ`, 19 when absent.
    pub size: u8,
    /// `KM` in points.
    pub komi: Option<HalfPoints>,
    /// `HA`: handicap stones given to Black.
    pub handicap: Option<u8>,
    /// `RU`, as written (see [`super::Ruleset`]'s `FromStr` for the names it knows).
    pub ruleset: Option<String>,
    /// `PB`
    pub black_player: Option<String>,
    /// `PW`
    pub white_player: Option<String>,
    /// `RE`, as written (`B+1.5`, `W+R`, `0`, ...; see [`super::GameResult`]).
    pub result: Option<String>,
    /// `DT`
    pub date: Option<String>,
    /// `TM`: main time per player in seconds.
    pub time_limit: Option<f64>,
    /// `OT`: the overtime system in words, e.g. `5x30 byo-yomi`.
    pub overtime: Option<String>,
    /// `AB` and `AW` stones of the starting position: Black's first, then White's, each
    /// point at most once.
    pub setup: Vec<(Vertex, Color)>,
    /// `PL`: who moves first from the starting position.
    pub to_move: Option<Color>,
    /// The main line's moves, passes included.
    pub moves: Vec<MoveNode>,
    /// Every other property of the root (and of move-less nodes before the first move),
    /// in order, so they survive a read-write round trip.
    pub root_properties: Vec<Property>,
}

/// Root properties the writer always writes itself (`FF`, `GM`, `CA`) or from typed
/// fields; copies of them among [`GameRecord::root_properties`] are not written twice.
/// (`TM` is not among them: one that is not a number stays there, and is written.)
const TYPED_ROOT: &[&str] = &[
    "FF", "GM", "CA", "SZ", "KM", "HA", "RU", "PB", "PW", "RE", "DT", "OT", "AB", "AW", "AE", "PL",
];

impl GameRecord {
    /// An empty record of a `size` board (2 to 25) with nothing else set.
    pub fn new(size: u8) -> GameRecord {
        GameRecord {
            size,
            komi: None,
            handicap: None,
            ruleset: None,
            black_player: None,
            white_player: None,
            result: None,
            date: None,
            time_limit: None,
            overtime: None,
            setup: Vec::new(),
            to_move: None,
            moves: Vec::new(),
            root_properties: Vec::new(),
        }
    }

    /// Reads the first game tree of an SGF text.
    pub fn from_sgf(sgf: &str) -> Result<GameRecord, SgfError> {
        GameRecord::from_sgf_bytes(sgf.as_bytes())
    }

    /// Reads the first game tree of SGF bytes (see [`parse_bytes`] for encodings).
    pub fn from_sgf_bytes(sgf: &[u8]) -> Result<GameRecord, SgfError> {
        let games = parse_bytes(sgf)?;
        let main_line = games.into_iter().next().ok_or(SgfError::NoGameTree)?;
        GameRecord::from_nodes(&main_line)
    }

    /// Reads a main line (root first). Setup (`AB`, `AW`, `AE`, `PL`) may appear in any
    /// node before the first move; a node holding a move and setup sets up first. Moves
    /// `B[]`, and `B[tt]` on boards up to 19x19, are passes.
    pub fn from_nodes(nodes: &[Node]) -> Result<GameRecord, SgfError> {
        let root = nodes.first().ok_or(SgfError::NoGameTree)?;
        let size = match root.get("SZ") {
            Some(p) => parse_size(&p.simple_text())?,
            None => 19,
        };
        if let Some(gm) = root.get("GM") {
            let game = gm.simple_text();
            if game.trim() != "1" {
                return Err(SgfError::NotGo(game));
            }
        }
        let mut record = GameRecord::new(size);
        for (n, node) in nodes.iter().enumerate() {
            let mv = node_move(node, n, size)?;
            let mut move_node = mv.map(|(color, mv)| MoveNode::new(color, mv));
            let before_first_move = record.moves.is_empty();
            // Game information may follow the root in nodes before the first move; the
            // writer puts it back in the root, so it is read as if it stood there.
            let game_info = n == 0 || (before_first_move && move_node.is_none());
            for p in &node.properties {
                if game_info && record.read_root_property(p)? {
                    continue;
                }
                match p.ident.as_str() {
                    "B" | "W" if move_node.is_some() => continue,
                    "AB" | "AW" | "AE" if !before_first_move => {
                        return Err(SgfError::LateSetup {
                            node: n,
                            ident: p.ident.clone(),
                        });
                    }
                    "AB" | "AW" | "AE" => {
                        record.read_setup(p, n)?;
                        continue;
                    }
                    // In a node with a move, `PL` is kept as written: the writer puts
                    // the starting side in the root and a move's properties with it.
                    "PL" if before_first_move && move_node.is_none() => {
                        let text = p.simple_text();
                        let color = text.trim().parse().map_err(|_| SgfError::BadValue {
                            ident: "PL",
                            value: text.clone(),
                            expected: "a colour to play (B or W)",
                        })?;
                        record.to_move = Some(color);
                        continue;
                    }
                    _ => {}
                }
                // A node without a move after the first move belongs to the move before
                // it, as the writer writes it: its times are that move's times.
                let mover = match (&mut move_node, record.moves.last_mut()) {
                    (Some(m), _) | (None, Some(m)) => m,
                    (None, None) => {
                        merge_property(&mut record.root_properties, p);
                        continue;
                    }
                };
                if !read_move_time(mover, p) {
                    merge_property(&mut mover.properties, p);
                }
            }
            if let Some(m) = move_node {
                record.moves.push(m);
            }
        }
        Ok(record)
    }

    /// Reads one of the root's typed properties; false when `p` is not one of them.
    fn read_root_property(&mut self, p: &Property) -> Result<bool, SgfError> {
        let text = || Some(p.simple_text());
        match p.ident.as_str() {
            "FF" | "GM" | "CA" | "SZ" => {}
            "KM" => {
                let value = p.simple_text();
                self.komi = match value.trim() {
                    "" => None,
                    points => Some(HalfPoints::parse_points(points).ok_or_else(|| {
                        SgfError::BadValue {
                            ident: "KM",
                            value: value.clone(),
                            expected: "a komi in points that is a multiple of 0.5, such as 7.5",
                        }
                    })?),
                };
            }
            "HA" => {
                let value = p.simple_text();
                self.handicap = match value.trim() {
                    "" => None,
                    n => Some(n.parse().map_err(|_| SgfError::BadValue {
                        ident: "HA",
                        value: value.clone(),
                        expected: "a number of handicap stones",
                    })?),
                };
            }
            "RU" => self.ruleset = text(),
            "PB" => self.black_player = text(),
            "PW" => self.white_player = text(),
            "RE" => self.result = text(),
            "DT" => self.date = text(),
            "OT" => self.overtime = text(),
            // A time that is not a number is kept as an unknown property.
            "TM" => match p.simple_text().trim().parse::<f64>() {
                Ok(t) if t.is_finite() => self.time_limit = Some(t),
                _ => return Ok(false),
            },
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Adds `AB`/`AW` stones or removes `AE` points from the starting position. A point
    /// holds one stone, so a later property replaces what an earlier one set up there:
    /// the setup never outgrows the board, however often a record lists a point.
    fn read_setup(&mut self, p: &Property, node: usize) -> Result<(), SgfError> {
        let points = parse_point_list(p, node, self.size)?;
        self.setup.retain(|(v, _)| !points.contains(*v));
        match p.ident.as_str() {
            "AE" => {}
            ident => {
                let color = if ident == "AB" {
                    Color::Black
                } else {
                    Color::White
                };
                // Keep Black's stones before White's, as the writer writes them.
                let at = match color {
                    Color::Black => self
                        .setup
                        .iter()
                        .take_while(|(_, c)| *c == Color::Black)
                        .count(),
                    Color::White => self.setup.len(),
                };
                self.setup
                    .splice(at..at, points.points.into_iter().map(|v| (v, color)));
            }
        }
        Ok(())
    }

    /// Who moves first from the starting position: `PL`, else the colour of the first
    /// move, else White after a handicap of 2 or more, else Black.
    pub fn first_to_move(&self) -> Color {
        if let Some(c) = self.to_move {
            return c;
        }
        if let Some(m) = self.moves.first() {
            return m.color;
        }
        if self.handicap.unwrap_or(0) >= 2 {
            Color::White
        } else {
            Color::Black
        }
    }

    /// Writes the record as an FF[4] SGF game tree in UTF-8.
    pub fn to_sgf(&self) -> String {
        let mut out = String::with_capacity(64 + 12 * self.moves.len());
        let size = self.size;
        let _ = write!(out, "(;FF[4]GM[1]CA[UTF-8]SZ[{size}]");
        let mut text = |ident: &str, value: &Option<String>| {
            if let Some(v) = value {
                let _ = write!(out, "{ident}[{}]", escape(v));
            }
        };
        text("RU", &self.ruleset);
        text("PB", &self.black_player);
        text("PW", &self.white_player);
        text("DT", &self.date);
        text("RE", &self.result);
        text("OT", &self.overtime);
        if let Some(komi) = self.komi {
            let _ = write!(out, "KM[{komi}]");
        }
        if let Some(ha) = self.handicap {
            let _ = write!(out, "HA[{ha}]");
        }
        if let Some(tm) = self.time_limit {
            let _ = write!(out, "TM[{tm}]");
        }
        for p in self
            .root_properties
            .iter()
            .filter(|p| !TYPED_ROOT.contains(&p.ident.as_str()))
        {
            write_property(&mut out, p);
        }
        for (color, ident) in [(Color::Black, "AB"), (Color::White, "AW")] {
            let mut stones = self.setup.iter().filter(|(_, c)| *c == color).peekable();
            if stones.peek().is_some() {
                out.push_str(ident);
                for (v, _) in stones {
                    let _ = write!(out, "[{}]", v.to_sgf(size));
                }
            }
        }
        if let Some(c) = self.to_move {
            let _ = write!(out, "PL[{}]", c.letter());
        }
        out.push('\n');
        for (i, m) in self.moves.iter().enumerate() {
            let point = match m.mv {
                Move::Play(v) => v.to_sgf(size),
                Move::Pass => String::new(),
            };
            let letter = m.color.letter();
            let _ = write!(out, ";{letter}[{point}]");
            if let Some(t) = m.time_left {
                let _ = write!(out, "{letter}L[{t}]");
            }
            if let Some(p) = m.periods_left {
                let _ = write!(out, "O{letter}[{p}]");
            }
            for p in &m.properties {
                write_property(&mut out, p);
            }
            if i % 10 == 9 {
                out.push('\n');
            }
        }
        out.push_str(")\n");
        out
    }
}

impl fmt::Display for GameRecord {
    /// The record as SGF, as [`GameRecord::to_sgf`] writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_sgf())
    }
}

fn write_property(out: &mut String, p: &Property) {
    debug_assert!(
        !p.ident.is_empty() && p.ident.bytes().all(|b| b.is_ascii_uppercase()),
        "SGF property identifiers are upper-case letters, not {:?}",
        p.ident
    );
    out.push_str(&p.ident);
    for v in &p.values {
        let _ = write!(out, "[{v}]");
    }
}

/// Adds `p` to `properties`, appending its values to a property of the same name.
fn merge_property(properties: &mut Vec<Property>, p: &Property) {
    match properties.iter_mut().find(|q| q.ident == p.ident) {
        Some(q) => q.values.extend(p.values.iter().cloned()),
        None => properties.push(p.clone()),
    }
}

/// Reads `BL`/`WL`/`OB`/`OW` of the mover into `m`; false for any other property (or
/// one whose value is not a number, which stays an ordinary property).
fn read_move_time(m: &mut MoveNode, p: &Property) -> bool {
    let value = p.simple_text();
    let value = value.trim();
    match (p.ident.as_str(), m.color) {
        ("BL", Color::Black) | ("WL", Color::White) => match value.parse::<f64>() {
            Ok(t) if t.is_finite() => m.time_left = Some(t),
            _ => return false,
        },
        ("OB", Color::Black) | ("OW", Color::White) => match value.parse() {
            Ok(n) => m.periods_left = Some(n),
            Err(_) => return false,
        },
        _ => return false,
    }
    true
}

/// `SZ[19]`, or `SZ[19:19]` (FF[4] writes rectangular boards as columns:rows).
fn parse_size(text: &str) -> Result<u8, SgfError> {
    let bad = || SgfError::BadSize(text.to_string());
    let (cols, rows) = text.split_once(':').unwrap_or((text, text));
    let cols: u8 = cols.trim().parse().map_err(|_| bad())?;
    let rows: u8 = rows.trim().parse().map_err(|_| bad())?;
    if cols != rows || !(MIN_SIZE..=MAX_SIZE).contains(&cols) {
        return Err(bad());
    }
    Ok(cols)
}

/// The move a node holds, if any.
fn node_move(node: &Node, n: usize, size: u8) -> Result<Option<(Color, Move)>, SgfError> {
    let black = node.get("B");
    let white = node.get("W");
    let (color, p) = match (black, white) {
        (Some(_), Some(_)) => return Err(SgfError::TwoMoves { node: n }),
        (Some(p), None) => (Color::Black, p),
        (None, Some(p)) => (Color::White, p),
        (None, None) => return Ok(None),
    };
    let value = p.values.first().map(|v| v.trim()).unwrap_or("");
    if value.is_empty() || (value == "tt" && size <= 19) {
        return Ok(Some((color, Move::Pass)));
    }
    let v = Vertex::from_sgf(value, size).ok_or_else(|| SgfError::BadPoint {
        ident: p.ident.clone(),
        value: value.to_string(),
        node: n,
        size,
    })?;
    Ok(Some((color, Move::Play(v))))
}

/// Points of a board, each at most once, in the order first added: what a point list
/// holds, in memory and time bounded by the board, not by how often the list repeats.
struct PointSet {
    points: Vec<Vertex>,
    listed: [bool; MAX_SIZE as usize * MAX_SIZE as usize],
}

impl PointSet {
    fn new() -> PointSet {
        PointSet {
            points: Vec::new(),
            listed: [false; MAX_SIZE as usize * MAX_SIZE as usize],
        }
    }

    fn slot(v: Vertex) -> usize {
        usize::from(v.y) * usize::from(MAX_SIZE) + usize::from(v.x)
    }

    fn insert(&mut self, v: Vertex) {
        if !std::mem::replace(&mut self.listed[PointSet::slot(v)], true) {
            self.points.push(v);
        }
    }

    fn contains(&self, v: Vertex) -> bool {
        self.listed[PointSet::slot(v)]
    }
}

/// The points of a point list such as `AB[dd][pp]` or the rectangle `AB[aa:cc]`.
fn parse_point_list(p: &Property, node: usize, size: u8) -> Result<PointSet, SgfError> {
    let mut points = PointSet::new();
    for value in &p.values {
        let bad = || SgfError::BadPoint {
            ident: p.ident.clone(),
            value: value.clone(),
            node,
            size,
        };
        let point = |s: &str| Vertex::from_sgf(s.trim(), size).ok_or_else(bad);
        match value.split_once(':') {
            None => points.insert(point(value)?),
            Some((a, b)) => {
                let (a, b) = (point(a)?, point(b)?);
                for y in a.y.min(b.y)..=a.y.max(b.y) {
                    for x in a.x.min(b.x)..=a.x.max(b.x) {
                        points.insert(Vertex::new(x, y));
                    }
                }
            }
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(gtp: &str, size: u8) -> Vertex {
        Vertex::parse(gtp, size).unwrap()
    }

    #[test]
    fn reads_the_game_properties_and_the_main_line() {
        let sgf = "(;FF[4]GM[1]SZ[9]KM[7.5]HA[2]RU[Chinese]PB[Black \\] one]PW[White]\
                   RE[W+3.5]DT[2024-05-01]AB[cc][gg]PL[W]GN[test game]\n\
                   ;W[ee]WL[299.5]C[first];B[]BL[290];W[tt](;B[dc])(;B[aa]))";
        let r = GameRecord::from_sgf(sgf).unwrap();
        assert_eq!(r.size, 9);
        assert_eq!(r.komi, Some(HalfPoints(15)));
        assert_eq!(r.handicap, Some(2));
        assert_eq!(r.ruleset.as_deref(), Some("Chinese"));
        assert_eq!(r.black_player.as_deref(), Some("Black ] one"));
        assert_eq!(r.result.as_deref(), Some("W+3.5"));
        assert_eq!(r.date.as_deref(), Some("2024-05-01"));
        assert_eq!(
            r.setup,
            vec![(v("C7", 9), Color::Black), (v("G3", 9), Color::Black)]
        );
        assert_eq!(r.to_move, Some(Color::White));
        let moves: Vec<(Color, Move)> = r.moves.iter().map(|m| (m.color, m.mv)).collect();
        assert_eq!(
            moves,
            vec![
                (Color::White, Move::Play(v("E5", 9))),
                (Color::Black, Move::Pass),
                (Color::White, Move::Pass),
                (Color::Black, Move::Play(v("D7", 9))),
            ]
        );
        assert_eq!(r.moves[0].time_left, Some(299.5));
        assert_eq!(r.moves[0].properties, vec![Property::raw("C", ["first"])]);
        assert_eq!(r.root_properties, vec![Property::raw("GN", ["test game"])]);
    }

    #[test]
    fn defaults_when_the_root_says_nothing() {
        let r = GameRecord::from_sgf("(;;B[pd];W[dp])").unwrap();
        assert_eq!(r.size, 19);
        assert_eq!((r.komi, r.handicap, r.to_move), (None, None, None));
        assert_eq!(r.moves.len(), 2);
        assert_eq!(r.first_to_move(), Color::Black);
        let handicap = GameRecord::from_sgf("(;SZ[19]HA[3]AB[dd][pp][dp])").unwrap();
        assert_eq!(handicap.first_to_move(), Color::White);
    }

    #[test]
    fn compressed_point_lists_expand_to_rectangles() {
        let r = GameRecord::from_sgf("(;SZ[5]AB[aa:bb]AW[ee][ce:de])").unwrap();
        let black: Vec<String> = r
            .setup
            .iter()
            .filter(|s| s.1 == Color::Black)
            .map(|s| s.0.to_string())
            .collect();
        let white: Vec<String> = r
            .setup
            .iter()
            .filter(|s| s.1 == Color::White)
            .map(|s| s.0.to_string())
            .collect();
        assert_eq!(black, ["A4", "B4", "A5", "B5"]);
        assert_eq!(white, ["E1", "C1", "D1"]);
    }

    #[test]
    fn a_point_listed_again_holds_one_stone_the_last_one() {
        let r = GameRecord::from_sgf("(;SZ[5]AB[aa:ee][aa:ee][aa]AW[bb:cc];AE[cc]AW[aa])").unwrap();
        assert_eq!(r.setup.len(), 25 - 1);
        let at = |v: &str| r.setup.iter().find(|s| s.0.to_string() == v).map(|s| s.1);
        assert_eq!(at("A5"), Some(Color::White));
        assert_eq!(at("B4"), Some(Color::White));
        assert_eq!(at("C3"), None);
        assert_eq!(at("E1"), Some(Color::Black));
    }

    #[test]
    fn tt_is_a_pass_only_on_boards_up_to_19() {
        let small = GameRecord::from_sgf("(;SZ[19];B[tt])").unwrap();
        assert_eq!(small.moves[0].mv, Move::Pass);
        let big = GameRecord::from_sgf("(;SZ[21];B[tt])").unwrap();
        assert_eq!(big.moves[0].mv, Move::Play(Vertex::new(19, 1)));
    }

    #[test]
    fn escapes_and_soft_line_breaks_follow_ff4() {
        let nodes = &parse("(;C[a\\]b\\\\c\\\nd\r\ne\tf]N[x\ny])").unwrap()[0];
        assert_eq!(nodes[0].get("C").unwrap().text(), "a]b\\cd\ne f");
        assert_eq!(nodes[0].get("N").unwrap().simple_text(), "x y");
        assert_eq!(escape("a]b\\c"), "a\\]b\\\\c");
    }

    #[test]
    fn ff3_lower_case_identifiers_and_latin1_are_understood() {
        let mut sgf = b"(;CA[ISO-8859-1]SZ[9]PlayerBlack[Ren\xe9]AddBlack[ee];W[cc])".to_vec();
        let r = GameRecord::from_sgf_bytes(&sgf).unwrap();
        assert_eq!(r.black_player.as_deref(), Some("René"));
        assert_eq!(r.setup, vec![(v("E5", 9), Color::Black)]);
        // Without CA, invalid UTF-8 falls back to ISO-8859-1 rather than failing.
        sgf.drain(2..16);
        assert_eq!(&sgf[..6], b"(;SZ[9");
        let r = GameRecord::from_sgf_bytes(&sgf).unwrap();
        assert_eq!(r.black_player.as_deref(), Some("René"));
    }

    #[test]
    fn setup_before_the_first_move_in_later_nodes_is_accepted() {
        let r = GameRecord::from_sgf("(;SZ[9];AB[aa][bb]AE[aa]PL[W];W[cc])").unwrap();
        assert_eq!(r.setup, vec![(v("B8", 9), Color::Black)]);
        assert_eq!(r.to_move, Some(Color::White));
        let err = GameRecord::from_sgf("(;SZ[9];B[aa];AW[bb])").unwrap_err();
        assert_eq!(
            err,
            SgfError::LateSetup {
                node: 2,
                ident: "AW".into()
            }
        );
    }

    #[test]
    fn malformed_records_say_where() {
        let cases = [
            (
                "(;SZ[9];B[aa",
                "SGF is malformed at byte 12: expected `]` to close the value opened at byte 9",
            ),
            (
                "(;SZ[9];B[aa]",
                "SGF is malformed at byte 13: expected `)` to close the game tree",
            ),
            (
                "(;SZ[9]B",
                "SGF is malformed at byte 8: expected `[` to open a value of B",
            ),
            (
                "(SZ[9])",
                "SGF is malformed at byte 1: expected `;`: a game tree starts with a node",
            ),
            (
                "(;SZ[9](;B[aa]);W[bb])",
                "SGF is malformed at byte 15: expected `(` or `)`: no node may follow a variation",
            ),
            (
                "(;SZ[9]) junk",
                "SGF is malformed at byte 9: expected `(` to start another game tree, or the end",
            ),
            (
                "(;SZ[9]1[x])",
                "SGF is malformed at byte 7: expected a property, `;`, `(` or `)`",
            ),
            (
                "no tree here",
                "the text holds no SGF game tree; a record starts with `(;`",
            ),
        ];
        for (sgf, message) in cases {
            assert_eq!(
                GameRecord::from_sgf(sgf).unwrap_err().to_string(),
                message,
                "{sgf}"
            );
        }
    }

    #[test]
    fn records_a_server_cannot_replay_are_refused() {
        let cases = [
            (
                "(;SZ[26])",
                "SZ[26] is not a board size tengen plays; use a square board from 2 to 25",
            ),
            (
                "(;SZ[19:13])",
                "SZ[19:13] is not a board size tengen plays; use a square board from 2 to 25",
            ),
            ("(;GM[2])", "GM[2] is not a Go record (Go is GM[1])"),
            (
                "(;SZ[9];B[jj])",
                "B[jj] in node 1 is not a point of a 9x9 board",
            ),
            (
                "(;SZ[9]AB[aa:zz])",
                "AB[aa:zz] in node 0 is not a point of a 9x9 board",
            ),
            (
                "(;KM[7.25])",
                "KM[7.25] is not a komi in points that is a multiple of 0.5, such as 7.5",
            ),
            ("(;HA[two])", "HA[two] is not a number of handicap stones"),
            ("(;PL[X])", "PL[X] is not a colour to play (B or W)"),
            (
                "(;;B[aa]W[bb])",
                "node 1 holds both a black and a white move",
            ),
        ];
        for (sgf, message) in cases {
            assert_eq!(
                GameRecord::from_sgf(sgf).unwrap_err().to_string(),
                message,
                "{sgf}"
            );
        }
        assert_eq!(GameRecord::from_sgf("(;SZ[13:13])").unwrap().size, 13);
    }

    #[test]
    fn unknown_properties_survive_a_round_trip() {
        let sgf = "(;FF[4]GM[1]SZ[9]AP[GoGui:1.5]XX[raw \\] value][two]LB[cc:A];B[ee]LB[ee:1]TR[dd]MN[7];W[]C[pass\\\nhere])";
        let r = GameRecord::from_sgf(sgf).unwrap();
        let written = r.to_sgf();
        assert!(
            written.starts_with(
                "(;FF[4]GM[1]CA[UTF-8]SZ[9]AP[GoGui:1.5]XX[raw \\] value][two]LB[cc:A]\n"
            ),
            "{written}"
        );
        assert!(
            written.contains(";B[ee]LB[ee:1]TR[dd]MN[7];W[]C[pass\\\nhere])"),
            "{written}"
        );
        assert_eq!(GameRecord::from_sgf(&written).unwrap(), r);
    }

    #[test]
    fn the_writer_writes_what_a_server_records() {
        let mut r = GameRecord::new(19);
        r.komi = Some(HalfPoints(1));
        r.handicap = Some(2);
        r.ruleset = Some("Chinese".into());
        r.black_player = Some("ann".into());
        r.white_player = Some("bob [3d]".into());
        r.result = Some("W+R".into());
        r.time_limit = Some(600.0);
        r.overtime = Some("5x30 byo-yomi".into());
        r.setup = vec![(v("D4", 19), Color::Black), (v("Q16", 19), Color::Black)];
        let mut first = MoveNode::new(Color::White, Move::Play(v("Q4", 19)));
        first.time_left = Some(598.25);
        first.periods_left = Some(5);
        r.moves = vec![first, MoveNode::new(Color::Black, Move::Pass)];
        assert_eq!(
            r.to_sgf(),
            "(;FF[4]GM[1]CA[UTF-8]SZ[19]RU[Chinese]PB[ann]PW[bob [3d\\]]RE[W+R]OT[5x30 byo-yomi]\
             KM[0.5]HA[2]TM[600]AB[dp][pd]\n;W[pp]WL[598.25]OW[5];B[])\n"
        );
        assert_eq!(GameRecord::from_sgf(&r.to_sgf()).unwrap(), r);
    }

    #[test]
    fn deep_variations_do_not_overflow_the_stack() {
        let depth = 100_000;
        let sgf = format!("(;SZ[9]{}{})", "(;B[aa]".repeat(depth), ")".repeat(depth));
        assert_eq!(parse(&sgf).unwrap()[0].len(), depth + 1);
    }

    #[test]
    fn every_tree_of_a_collection_is_read() {
        let games = parse("(;SZ[9];B[aa])\n(;SZ[13];W[bb];B[cc])\n").unwrap();
        assert_eq!(games.iter().map(Vec::len).collect::<Vec<_>>(), [2, 3]);
    }

    mod round_trip {
        use super::*;
        use proptest::prelude::*;

        fn vertex(size: u8) -> impl Strategy<Value = Vertex> {
            (0..size, 0..size).prop_map(|(x, y)| Vertex::new(x, y))
        }

        fn text() -> impl Strategy<Value = String> {
            "[a-zA-Z0-9 :;()\\[\\]\\\\+.éü天元]{0,12}"
        }

        fn extra_property() -> impl Strategy<Value = Property> {
            // TM is read into `time_limit` when it is a number, so it is typed too.
            let ident = "[A-Z]{1,2}".prop_filter("not a typed property", |i| {
                !TYPED_ROOT.contains(&i.as_str())
                    && !["B", "W", "BL", "WL", "OB", "OW", "TM"].contains(&i.as_str())
            });
            (ident, prop::collection::vec(text(), 1..3))
                .prop_map(|(i, vs)| Property::from_text(&i, vs))
        }

        /// One property per identifier in a node, as FF[4] requires.
        fn unique_idents(properties: &mut Vec<Property>) {
            let mut seen = Vec::new();
            properties.retain(|p| {
                let first = !seen.contains(&p.ident);
                seen.push(p.ident.clone());
                first
            });
        }

        fn move_node(size: u8) -> impl Strategy<Value = MoveNode> {
            (
                any::<bool>(),
                prop::option::weighted(0.9, vertex(size)),
                prop::option::of((0u32..10_000_000).prop_map(|ms| f64::from(ms) / 1000.0)),
                prop::option::of(0u32..30),
                prop::collection::vec(extra_property(), 0..2),
            )
                .prop_map(|(black, at, time_left, periods_left, mut properties)| {
                    unique_idents(&mut properties);
                    MoveNode {
                        color: if black { Color::Black } else { Color::White },
                        mv: at.map_or(Move::Pass, Move::Play),
                        time_left,
                        periods_left,
                        properties,
                    }
                })
        }

        fn record() -> impl Strategy<Value = GameRecord> {
            (MIN_SIZE..=MAX_SIZE).prop_flat_map(|size| {
                let info = (
                    prop::option::of((-40i32..40).prop_map(HalfPoints)),
                    prop::option::of(0u8..10),
                    prop::option::of(text()),
                    prop::option::of(text()),
                    prop::option::of(text()),
                    prop::option::of(text()),
                    prop::option::of(text()),
                );
                let setup = (
                    prop::collection::btree_set(vertex(size), 0..6),
                    prop::collection::btree_set(vertex(size), 0..6),
                    prop::option::of(any::<bool>()),
                );
                let rest = (
                    prop::collection::vec(move_node(size), 0..120),
                    prop::collection::vec(extra_property(), 0..3),
                    prop::option::of((0u32..100_000).prop_map(f64::from)),
                    prop::option::of(text()),
                );
                (Just(size), info, setup, rest).prop_map(|(size, info, setup, rest)| {
                    let (komi, handicap, ruleset, black_player, white_player, result, date) = info;
                    let (black, white, to_move) = setup;
                    let (moves, mut root_properties, time_limit, overtime) = rest;
                    unique_idents(&mut root_properties);
                    GameRecord {
                        size,
                        komi,
                        handicap,
                        ruleset,
                        black_player,
                        white_player,
                        result,
                        date,
                        time_limit,
                        overtime,
                        setup: black
                            .iter()
                            .map(|&v| (v, Color::Black))
                            .chain(white.difference(&black).map(|&v| (v, Color::White)))
                            .collect(),
                        to_move: to_move.map(|b| if b { Color::Black } else { Color::White }),
                        moves,
                        root_properties,
                    }
                })
            })
        }

        proptest! {
            #[test]
            fn writing_then_reading_gives_the_same_record(r in record()) {
                let written = r.to_sgf();
                let read = GameRecord::from_sgf(&written).map_err(|e| TestCaseError::fail(format!("{e}\n{written}")))?;
                prop_assert_eq!(read, r, "{}", written);
            }
        }
    }
}
