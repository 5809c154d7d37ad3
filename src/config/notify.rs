//! `[notify]` and `[mail]`: how many notices each account keeps, which games send "your
//! move", and the SMTP server that mails notices (off unless the operator sets it up).
//! The SMTP password is never a setting: only where to read it (a file or a variable),
//! so that `config --print` and the logs cannot show it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The notice list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifyConfig {
    /// Notices kept per account; older ones are forgotten.
    pub keep_per_account: u32,
    /// A player who has no connection to a game is told "your move" only when the game
    /// gives at least this many seconds for a move, so live games do not send them.
    pub your_move_min_secs: u64,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            keep_per_account: 200,
            your_move_min_secs: 3600,
        }
    }
}

/// How the connection to the SMTP server is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MailTls {
    /// Plain connection upgraded with STARTTLS, which must succeed (port 587).
    #[default]
    Starttls,
    /// TLS from the first byte (port 465).
    Tls,
    /// No encryption: only for a server on this machine or a trusted network.
    None,
}

/// The SMTP server notices are mailed through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MailConfig {
    /// Whether mail is sent at all.
    pub enabled: bool,
    pub host: String,
    pub port: u16,
    pub tls: MailTls,
    /// The sender, `Name <address>` or an address.
    pub from: String,
    /// The SMTP login; none: the server takes mail without one.
    pub username: Option<String>,
    /// A file holding the SMTP password (its first line).
    pub password_file: Option<PathBuf>,
    /// The environment variable holding the SMTP password.
    pub password_env: Option<String>,
    /// A digest of an account's notices leaves at most once in this many hours.
    pub digest_hours: u32,
    /// How often the server looks for digests that are due.
    pub sweep_secs: u64,
}

impl Default for MailConfig {
    fn default() -> Self {
        MailConfig {
            enabled: false,
            host: String::new(),
            port: 587,
            tls: MailTls::default(),
            from: String::new(),
            username: None,
            password_file: None,
            password_env: None,
            digest_hours: 24,
            sweep_secs: 60,
        }
    }
}

/// The most notices an account may keep.
pub const MAX_KEEP: u32 = 10_000;

impl NotifyConfig {
    /// The first setting out of range: its key and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(1..=MAX_KEEP).contains(&self.keep_per_account) {
            return Err((
                "notify.keep_per_account",
                format!("must be from 1 to {MAX_KEEP}"),
            ));
        }
        Ok(())
    }
}

impl MailConfig {
    /// The first setting out of range or missing: its key and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(1..=24 * 28).contains(&self.digest_hours) {
            return Err((
                "mail.digest_hours",
                "must be from 1 to 672 (4 weeks)".into(),
            ));
        }
        if !(1..=3600).contains(&self.sweep_secs) {
            return Err(("mail.sweep_secs", "must be from 1 to 3600".into()));
        }
        if self.password_file.is_some() && self.password_env.is_some() {
            return Err((
                "mail.password_file",
                "and mail.password_env are both set; keep one".into(),
            ));
        }
        if let Some(var) = &self.password_env
            && var.starts_with(super::ENV_PREFIX)
        {
            return Err((
                "mail.password_env",
                format!(
                    "names {var}, but {}* variables are settings; name another, e.g. SMTP_PASSWORD",
                    super::ENV_PREFIX
                ),
            ));
        }
        if !self.enabled {
            return Ok(());
        }
        if self.host.is_empty() {
            return Err(("mail.host", "must be set when mail.enabled is true".into()));
        }
        if self.from.parse::<lettre::message::Mailbox>().is_err() {
            return Err((
                "mail.from",
                format!(
                    "must be an address or `Name <address>` when mail.enabled is true, not {:?}",
                    self.from
                ),
            ));
        }
        let secret = self.password_file.is_some() || self.password_env.is_some();
        if self.username.is_some() != secret {
            return Err((
                "mail.username",
                "and a password (mail.password_file or mail.password_env) go together".into(),
            ));
        }
        Ok(())
    }

    /// The SMTP password from its file or variable; None without a login.
    pub fn password(&self) -> Result<Option<String>, String> {
        if let Some(path) = &self.password_file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read mail.password_file {}: {e}", path.display()))?;
            return Ok(Some(text.lines().next().unwrap_or_default().to_string()));
        }
        if let Some(var) = &self.password_env {
            return std::env::var(var)
                .map(Some)
                .map_err(|_| format!("mail.password_env names {var}, which is not set"));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> MailConfig {
        MailConfig {
            enabled: true,
            host: "smtp.example.org".into(),
            from: "tengen <notices@example.org>".into(),
            ..MailConfig::default()
        }
    }

    #[test]
    fn mail_that_cannot_work_is_refused_naming_its_key() {
        assert_eq!(MailConfig::default().check(), Ok(()), "off needs nothing");
        assert_eq!(on().check(), Ok(()));
        let refused = |c: MailConfig| c.check().expect_err("refused").0;
        assert_eq!(
            refused(MailConfig {
                host: "".into(),
                ..on()
            }),
            "mail.host"
        );
        assert_eq!(
            refused(MailConfig {
                from: "not an address".into(),
                ..on()
            }),
            "mail.from"
        );
        let login = MailConfig {
            username: Some("tengen".into()),
            ..on()
        };
        assert_eq!(refused(login.clone()), "mail.username");
        let both = MailConfig {
            password_file: Some("/p".into()),
            password_env: Some("SMTP_PASSWORD".into()),
            ..login.clone()
        };
        assert_eq!(refused(both), "mail.password_file");
        let ours = MailConfig {
            password_env: Some("TENGEN_SMTP".into()),
            ..login
        };
        assert_eq!(refused(ours), "mail.password_env");
        assert_eq!(
            refused(MailConfig {
                digest_hours: 0,
                ..on()
            }),
            "mail.digest_hours"
        );
    }

    #[test]
    fn the_password_is_the_first_line_of_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("smtp");
        std::fs::write(&path, "s3cret\nignored\n").unwrap();
        let config = MailConfig {
            password_file: Some(path),
            ..on()
        };
        assert_eq!(config.password(), Ok(Some("s3cret".into())));
        let missing = MailConfig {
            password_file: Some(dir.path().join("none")),
            ..on()
        };
        let error = missing.password().expect_err("no file");
        assert!(error.contains("mail.password_file"), "{error}");
        assert_eq!(on().password(), Ok(None));
    }
}
