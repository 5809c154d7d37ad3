//! A Go engine as a child process speaking GTP (Go Text Protocol, version 2) on its
//! standard input and output: start it, send one command at a time, read its reply.
//!
//! Owns the child process and nothing else: it knows no game and no server. Every
//! command has a deadline, so an engine that stalls becomes an error, never a hang, and
//! an engine that dies is reported as [`GtpError::Exited`]. Dropping an [`Engine`] kills
//! its process.

use std::collections::HashSet;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use thiserror::Error;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Deadline for commands that need no thinking (`play`, `boardsize`, `list_commands`).
pub const QUICK: Duration = Duration::from_secs(30);

/// Why a GTP command did not succeed. Each message holds its cause, so none is also a
/// [`std::error::Error::source`] (the binary would print it twice).
#[derive(Debug, Error)]
pub enum GtpError {
    #[error("The engine command line is empty.")]
    NoCommand,
    #[error("The engine command line has an unclosed quote.")]
    UnclosedQuote,
    #[error("The engine `{program}` could not be started: {cause}.")]
    Spawn {
        program: String,
        cause: std::io::Error,
    },
    #[error("Talking to the engine failed: {0}.")]
    Io(std::io::Error),
    #[error("The engine exited.")]
    Exited,
    #[error("The engine did not answer `{command}` within {seconds} seconds.")]
    Timeout { command: String, seconds: u64 },
    /// The engine answered `? message`.
    #[error("The engine refused `{command}`: {message}.")]
    Failure { command: String, message: String },
    #[error("The engine answered `{command}` with something that is not GTP: {text:?}.")]
    Malformed { command: String, text: String },
}

impl From<std::io::Error> for GtpError {
    fn from(e: std::io::Error) -> GtpError {
        GtpError::Io(e)
    }
}

/// One parsed GTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// `=` followed by the result (lines joined with `\n`, outer blanks trimmed).
    Success(String),
    /// `?` followed by the error message.
    Failure(String),
}

/// Reads one complete response: the lines of text up to (not including) the empty line
/// that ends it. Accepts an optional numeric id after `=`/`?` (GTP allows it) and `\r\n`.
/// `None` when the text is not a GTP response.
pub fn parse_response(text: &str) -> Option<Response> {
    let text = text.trim_start_matches(['\r', '\n']);
    let (status, rest) = text.split_at_checked(1)?;
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    if !(rest.is_empty() || rest.starts_with([' ', '\t', '\n', '\r'])) {
        return None;
    }
    let body: Vec<&str> = rest.lines().map(|l| l.trim_end_matches('\r')).collect();
    let body = body.join("\n").trim().to_string();
    match status {
        "=" => Some(Response::Success(body)),
        "?" => Some(Response::Failure(body)),
        _ => None,
    }
}

/// Splits an engine command line into program and arguments: whitespace separates
/// words, single or double quotes group them, a backslash escapes the next character.
/// No shell is involved, so no other shell syntax means anything.
pub fn split_command_line(line: &str) -> Result<Vec<String>, GtpError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                in_word = true;
            }
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(GtpError::UnclosedQuote);
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(GtpError::NoCommand);
    }
    Ok(words)
}

/// A running engine.
pub struct Engine {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    commands: HashSet<String>,
    /// Set once the process has been seen to exit.
    exited: bool,
}

impl Engine {
    /// Starts `command_line` (program and arguments, see [`split_command_line`]) and
    /// asks it for its command list. The engine's stderr is passed through.
    pub async fn start(command_line: &str) -> Result<Engine, GtpError> {
        let words = split_command_line(command_line)?;
        let mut child = Command::new(&words[0])
            .args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|cause| GtpError::Spawn {
                program: words[0].clone(),
                cause,
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(GtpError::Exited);
        };
        let mut engine = Engine {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            commands: HashSet::new(),
            exited: false,
        };
        let list = engine.command("list_commands", QUICK).await?;
        engine.commands = list.split_whitespace().map(str::to_string).collect();
        Ok(engine)
    }

    /// Whether the engine listed `command` in `list_commands`.
    pub fn knows(&self, command: &str) -> bool {
        self.commands.contains(command)
    }

    /// The engine's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Sends one command and returns the result of a `=` response; a `?` response is a
    /// [`GtpError::Failure`]. After any other error the engine's state is unknown and it
    /// should not be used again.
    pub async fn command(&mut self, command: &str, timeout: Duration) -> Result<String, GtpError> {
        if self.exited {
            return Err(GtpError::Exited);
        }
        let exchange = async {
            self.stdin.write_all(command.as_bytes()).await?;
            self.stdin.write_all(b"\n").await?;
            self.stdin.flush().await?;
            read_response(&mut self.stdout, command).await
        };
        let result = match tokio::time::timeout(timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(GtpError::Timeout {
                command: command.to_string(),
                seconds: timeout.as_secs(),
            }),
        };
        tracing::debug!(command, answer = ?result, "gtp");
        if let Err(GtpError::Io(e)) = &result
            && e.kind() == std::io::ErrorKind::BrokenPipe
        {
            self.exited = true;
            return Err(GtpError::Exited);
        }
        if matches!(result, Err(GtpError::Exited)) {
            self.exited = true;
        }
        result
    }

    /// Resolves when the process exits (by itself or killed). Cancel-safe: use it in a
    /// `select!` to notice a crash while no command is running.
    pub async fn exited(&mut self) -> std::io::Result<ExitStatus> {
        let status = self.child.wait().await;
        self.exited = true;
        status
    }

    /// Asks the engine to quit, then makes sure the process is gone.
    pub async fn quit(mut self) {
        if !self.exited {
            let _ = self.command("quit", Duration::from_secs(2)).await;
        }
        if tokio::time::timeout(Duration::from_secs(2), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Reads lines up to the empty line that ends a response (blank lines before it are
/// skipped, as GTP asks of controllers).
async fn read_response(
    stdout: &mut BufReader<ChildStdout>,
    command: &str,
) -> Result<String, GtpError> {
    let mut text = String::new();
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).await? == 0 {
            return Err(GtpError::Exited);
        }
        let blank = line.trim().is_empty();
        if blank && text.is_empty() {
            continue;
        }
        if blank {
            break;
        }
        text.push_str(&line);
    }
    match parse_response(&text) {
        Some(Response::Success(body)) => Ok(body),
        Some(Response::Failure(message)) => Err(GtpError::Failure {
            command: command.to_string(),
            message,
        }),
        None => Err(GtpError::Malformed {
            command: command.to_string(),
            text,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Option<Response> {
        Some(Response::Success(s.to_string()))
    }

    #[test]
    fn responses_parse_with_and_without_ids() {
        assert_eq!(parse_response("= C4\n"), ok("C4"));
        assert_eq!(parse_response("=12 pass\n"), ok("pass"));
        assert_eq!(parse_response("=\n"), ok(""));
        assert_eq!(parse_response("= \n"), ok(""));
        assert_eq!(parse_response("="), ok(""));
        assert_eq!(
            parse_response("? illegal move\n"),
            Some(Response::Failure("illegal move".into()))
        );
        assert_eq!(
            parse_response("?3 unknown command"),
            Some(Response::Failure("unknown command".into()))
        );
    }

    #[test]
    fn multi_line_and_crlf_responses_keep_their_lines() {
        assert_eq!(parse_response("= A1 B2\nC3\r\n"), ok("A1 B2\nC3"));
        assert_eq!(parse_response("\n\n= W+6.5\r\n"), ok("W+6.5"));
        assert_eq!(
            parse_response("= \n   A B C\n 3 . . .\n"),
            ok("A B C\n 3 . . .")
        );
    }

    #[test]
    fn text_that_is_not_gtp_is_refused() {
        assert_eq!(parse_response(""), None);
        assert_eq!(parse_response("hello"), None);
        assert_eq!(parse_response("=x"), None);
        assert_eq!(parse_response("!= C4"), None);
    }

    #[test]
    fn command_lines_split_like_a_shell_would() {
        assert_eq!(
            split_command_line("/usr/games/gnugo --mode gtp  --level 1").unwrap(),
            ["/usr/games/gnugo", "--mode", "gtp", "--level", "1"]
        );
        assert_eq!(
            split_command_line(r#"katago gtp -config "my dir/a.cfg" -model 'b 6.gz' x\ y"#)
                .unwrap(),
            [
                "katago",
                "gtp",
                "-config",
                "my dir/a.cfg",
                "-model",
                "b 6.gz",
                "x y"
            ]
        );
        assert_eq!(split_command_line(r#"a "" b"#).unwrap(), ["a", "", "b"]);
        assert!(matches!(split_command_line("  "), Err(GtpError::NoCommand)));
        assert!(matches!(
            split_command_line("a 'b"),
            Err(GtpError::UnclosedQuote)
        ));
    }
}
