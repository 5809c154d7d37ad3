//! What the bot bridge reads from a GTP engine, on any text: the response parser and the
//! readings of a `genmove` answer and of a vertex list never panic, accept only what
//! they can give back, and a parsed move or vertex is on the board and writes back as
//! itself. Also the engine command line splitter: quoting its words splits back to them.

use tengen::bot::gtp::{Response, parse_response, split_command_line};
use tengen::rules::{Move, Vertex};

pub fn check(data: &[u8]) {
    let Some((&size, text)) = data.split_first() else {
        return;
    };
    let size = 2 + size % 24;
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    if let Some(response) = parse_response(text) {
        let status = text.trim_start_matches(['\r', '\n']).as_bytes()[0];
        let body = match response {
            Response::Success(body) => {
                assert_eq!(status, b'=', "{text:?}");
                body
            }
            Response::Failure(body) => {
                assert_eq!(status, b'?', "{text:?}");
                body
            }
        };
        assert_eq!(body.trim(), body, "the body of {text:?} is not trimmed");
        assert!(!body.contains("\r\n"), "a CR LF left in {body:?}");
    }
    // A `genmove` answer, and a `final_status_list` or `fixed_handicap` vertex list.
    if let Ok(mv) = Move::parse(text.trim(), size) {
        if let Move::Play(v) = mv {
            assert!(v.x < size && v.y < size, "{text:?} is off a {size} board");
        }
        assert_eq!(Move::parse(&mv.to_string(), size), Ok(mv), "{text:?}");
    }
    for word in text.split_whitespace() {
        if let Ok(v) = Vertex::parse(word, size) {
            assert!(v.x < size && v.y < size, "{word:?} is off a {size} board");
            assert_eq!(Vertex::parse(&v.to_string(), size), Ok(v), "{word:?}");
        }
    }
    if let Ok(words) = split_command_line(text) {
        assert!(!words.is_empty());
        let quoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
        assert_eq!(
            split_command_line(&quoted.join(" ")).ok(),
            Some(words),
            "{text:?}"
        );
    }
}

/// One word in double quotes, with `"` and `\` escaped.
fn quote(word: &str) -> String {
    let mut out = String::from("\"");
    for c in word.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}
