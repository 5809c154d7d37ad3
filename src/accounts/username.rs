//! Usernames: what identifies an account at login. Two spellings that a person would
//! read as the same name (`Alice`, `ALICE`, `Ａｌｉｃｅ` in full-width letters) are one
//! name, so nobody can register a look-alike of an existing account by case or by
//! Unicode compatibility forms. Display names are shown; usernames identify.

use unicode_normalization::UnicodeNormalization;

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

/// A valid username in its one canonical form: NFKC, lower case, NFKC again (lower-casing
/// can leave a string that is not normalised), 3 to 24 characters, each a letter or digit
/// of any script, `_` or `-`, starting with a letter or digit.
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
        let folded: String = text
            .trim()
            .nfkc()
            .collect::<String>()
            .to_lowercase()
            .nfkc()
            .collect();
        let chars = folded.chars().count();
        if !(MIN_CHARS..=MAX_CHARS).contains(&chars) {
            return Err(UsernameError::Length(chars));
        }
        for (i, c) in folded.chars().enumerate() {
            let allowed = c.is_alphanumeric() || (i > 0 && matches!(c, '_' | '-'));
            if !allowed {
                return Err(UsernameError::Character(c));
            }
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
