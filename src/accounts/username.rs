//! Usernames: what identifies an account at login. Two spellings that a person would
//! read as the same name (`Alice`, `ALICE`, `Ａｌｉｃｅ` in full-width letters, `Straße`
//! and `STRASSE`) are one name, so nobody can register a look-alike of an existing
//! account by case or by Unicode compatibility forms; and a name must be written in one
//! script (UTS #39), so a Cyrillic `а` cannot hide in a Latin name. Display names are
//! shown; usernames identify.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;
use unicode_security::{GeneralSecurityProfile, MixedScript};

/// Fewest characters of a username, after normalisation.
pub const MIN_CHARS: usize = 3;
/// Most characters of a username, after normalisation.
pub const MAX_CHARS: usize = 24;
/// Bytes of username text read at all: anything longer is refused before it is
/// normalised, so a huge field costs nothing.
const MAX_INPUT_BYTES: usize = 256;

/// Names nobody may register: they would pass for the server or its staff, or for a
/// guest (`guest…` is the prefix of generated guest names).
const RESERVED: &[&str] = &[
    "admin",
    "administrator",
    "anonymous",
    "api",
    "bot",
    "guest",
    "help",
    "mod",
    "moderator",
    "null",
    "operator",
    "owner",
    "referee",
    "root",
    "server",
    "staff",
    "support",
    "system",
    "tengen",
    "undefined",
    "webmaster",
];

/// The prefix of every generated guest name; no username starts with it.
pub const GUEST_PREFIX: &str = "guest";

/// A valid username in its one canonical form: NFKC, Unicode full case folding (`ß`
/// folds to `ss`, `İ` to `i` and a combining dot), NFKC again (folding can leave a string
/// that is not normalised), 3 to 24 characters, each a letter or digit of any script, a
/// combining mark after the first, `_` or `-`, starting with a letter or digit, every
/// one allowed in identifiers by UTS #39, all of one script.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Username(String);

/// Why a username is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsernameError {
    #[error("a username must have {MIN_CHARS} to {MAX_CHARS} characters, not {0}")]
    Length(usize),
    #[error(
        "a username may hold letters, digits, `_` and `-` only, and must start with a letter or digit; {0:?} is not allowed"
    )]
    Character(char),
    #[error("the username {0:?} is reserved")]
    Reserved(String),
    #[error(
        "a username must be written in one script: {0:?} mixes letters of several, which could pass for another name"
    )]
    MixedScripts(String),
}

impl Username {
    /// The canonical form of `text` for a new account: [`Username::canonical`], and not
    /// a reserved name.
    pub fn parse(text: &str) -> Result<Username, UsernameError> {
        let name = Username::canonical(text)?;
        if RESERVED.contains(&name.as_str()) || name.0.starts_with(GUEST_PREFIX) {
            return Err(UsernameError::Reserved(name.0));
        }
        Ok(name)
    }

    /// The canonical form of `text`, or why it cannot be a username; reserved names
    /// pass, since an operator may give one out (`tengen user add`) and its owner must
    /// be able to log in with it.
    pub fn canonical(text: &str) -> Result<Username, UsernameError> {
        if text.len() > MAX_INPUT_BYTES {
            return Err(UsernameError::Length(text.chars().count()));
        }
        let folded = fold(text.trim(), caseless::default_case_fold_str);
        let chars = folded.chars().count();
        if !(MIN_CHARS..=MAX_CHARS).contains(&chars) {
            return Err(UsernameError::Length(chars));
        }
        for (i, c) in folded.chars().enumerate() {
            let allowed = match c {
                '_' | '-' => i > 0,
                c if c.is_alphanumeric() => c.identifier_allowed(),
                c => i > 0 && is_combining_mark(c) && c.identifier_allowed(),
            };
            if !allowed {
                return Err(UsernameError::Character(c));
            }
        }
        if !folded.as_str().is_single_script() {
            return Err(UsernameError::MixedScripts(folded));
        }
        Ok(Username(folded))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// Accounts registered before usernames were case-folded whose id is not its own
/// folding (`straße`), by that folding (`strasse`), from the ids that may be such
/// ([`crate::store::AccountStore::non_ascii_local_ids`]). No new account can be one.
pub fn unfolded(ids: Vec<String>) -> HashMap<String, String> {
    ids.into_iter()
        .filter_map(|id| {
            let folded = Username::canonical(&id).ok()?.into_string();
            (folded != id).then_some((folded, id))
        })
        .collect()
}

/// `text` in NFKC, mapped by `case`, and in NFKC again.
fn fold(text: &str, case: impl Fn(&str) -> String) -> String {
    case(&text.nfkc().collect::<String>()).nfkc().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str) -> String {
        Username::parse(text).expect(text).into_string()
    }

    #[test]
    fn case_and_compatibility_forms_are_one_name() {
        assert_eq!(canon("Alice"), "alice");
        assert_eq!(canon("ALICE"), "alice");
        // Full-width letters (U+FF21…) are NFKC-equivalent to ASCII.
        assert_eq!(canon("Ａｌｉｃｅ"), "alice");
        // A precomposed é and e + combining acute are one name.
        assert_eq!(canon("Ren\u{e9}"), canon("Rene\u{301}"));
        assert_eq!(canon("  bob_2-x "), "bob_2-x");
        // Letters of other scripts are letters.
        assert_eq!(canon("李世石"), "李世石");
        assert_eq!(canon("ΣΟΦΙΑ"), "σοφια");
        // Full case folding: one name, however written.
        assert_eq!(canon("Straße"), "strasse");
        assert_eq!(canon("STRASSE"), "strasse");
        assert_eq!(canon("ΣΟΦΊΑΣ"), canon("σοφίας"));
        // A dotted capital I folds to i and a combining dot, which a name may hold.
        assert_eq!(canon("İstanbul"), "i\u{307}stanbul");
        assert_eq!(canon("Ren\u{e9}"), canon("RENE\u{301}"));
    }

    #[test]
    fn a_name_is_written_in_one_script() {
        // A Cyrillic а (U+0430) among Latin letters.
        for bad in ["p\u{430}ypal", "\u{430}dmin1", "Ali\u{441}e"] {
            assert!(
                matches!(Username::parse(bad), Err(UsernameError::MixedScripts(_))),
                "{bad:?} was accepted: {:?}",
                Username::parse(bad)
            );
        }
        // Japanese mixes kana and kanji in one script set; digits go with any script.
        assert!(Username::parse("囲碁クラブ").is_ok());
        assert!(Username::parse("игрок_7").is_ok());
        assert!(Username::parse("bob2").is_ok());
    }

    #[test]
    fn accounts_from_before_case_folding_are_found_by_their_folding() {
        let ids = ["straße", "strasse", "alice", "ǆemal"]
            .map(String::from)
            .to_vec();
        let old = unfolded(ids);
        assert_eq!(old.get("strasse").map(String::as_str), Some("straße"));
        assert_eq!(old.len(), 2, "{old:?}");
        assert_eq!(old.get("džemal").map(String::as_str), Some("ǆemal"));
    }

    #[test]
    fn lengths_are_counted_in_characters_after_normalisation() {
        assert_eq!(Username::parse("ab"), Err(UsernameError::Length(2)));
        assert!(Username::parse("abc").is_ok());
        assert!(Username::parse(&"x".repeat(24)).is_ok());
        assert_eq!(
            Username::parse(&"x".repeat(25)),
            Err(UsernameError::Length(25))
        );
        assert_eq!(Username::parse(""), Err(UsernameError::Length(0)));
        assert!(Username::parse(&"x".repeat(10_000)).is_err());
        // 24 two-byte letters are 24 characters.
        assert!(Username::parse(&"é".repeat(24)).is_ok());
    }

    #[test]
    fn only_letters_digits_underscore_and_hyphen() {
        for bad in [
            "a b",
            "a.b",
            "<script>",
            "al\u{0}ice",
            "ali\u{200b}ce",
            "\u{200b}\u{200b}\u{200b}",
            "bob\u{202e}x",
            "\u{301}bob",
            "_bob",
            "-bob",
            "bo@b",
        ] {
            assert!(
                matches!(Username::parse(bad), Err(UsernameError::Character(_))),
                "{bad:?} was accepted"
            );
        }
        assert!(Username::parse("b_-9").is_ok());
    }

    #[test]
    fn reserved_names_in_any_spelling_are_refused() {
        for bad in [
            "admin",
            "Admin",
            "ＡＤＭＩＮ",
            "referee",
            "System",
            "guest",
            "guest-1234",
            "Guest_x",
        ] {
            assert!(
                matches!(Username::parse(bad), Err(UsernameError::Reserved(_))),
                "{bad:?} was accepted"
            );
        }
        assert!(Username::parse("admins").is_ok());
        assert_eq!(canon_any("Admin"), "admin");
    }

    fn canon_any(text: &str) -> String {
        Username::canonical(text).expect(text).into_string()
    }
}
