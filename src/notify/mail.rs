//! Mail through the operator's SMTP server: a notice that cannot wait, a digest of the
//! rest, and the link that verifies an address. Every notice mail carries a one-click
//! unsubscribe link for its kinds, in the text and in `List-Unsubscribe` (RFC 2369, with
//! RFC 8058's one-click POST). The SMTP password is read once here and kept only inside
//! the transport: never logged, never in an error.

use std::sync::OnceLock;
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::message::header::{ContentType, Header, HeaderName, HeaderValue};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::links::{Link, Links};
use crate::config::{MailConfig, MailTls};
use crate::protocol::{Notice, NoticeKind};

/// How long one conversation with the SMTP server may take.
const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

/// Why mail could not be set up or sent.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("mail is not usable: {0}")]
    Setup(String),
    #[error("a mail could not be made: {0}")]
    Build(String),
    #[error("the SMTP server did not take a mail: {0}")]
    Send(String),
}

/// The operator's SMTP server, and what every mail says the same way.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    links: Links,
    /// Where links point: the server's public URL, known once it listens.
    base_url: OnceLock<String>,
}

/// `List-Unsubscribe: <url>`.
#[derive(Clone)]
struct ListUnsubscribe(String);

impl Header for ListUnsubscribe {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("List-Unsubscribe")
    }
    fn parse(s: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(ListUnsubscribe(s.trim_matches(['<', '>']).to_string()))
    }
    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), format!("<{}>", self.0))
    }
}

/// `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058).
#[derive(Clone)]
struct OneClick;

impl Header for OneClick {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("List-Unsubscribe-Post")
    }
    fn parse(_: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(OneClick)
    }
    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), "List-Unsubscribe=One-Click".into())
    }
}

/// Checks what `serve` will need from `[mail]`: the sender, the TLS name and the password.
pub fn check(config: &MailConfig) -> Result<(), MailError> {
    if config.enabled {
        Mailer::new(config, Links::new(b"check")).map(drop)
    } else {
        Ok(())
    }
}

impl Mailer {
    pub fn new(config: &MailConfig, links: Links) -> Result<Mailer, MailError> {
        let setup = |e: String| MailError::Setup(e);
        let from = config
            .from
            .parse::<Mailbox>()
            .map_err(|e| setup(format!("mail.from: {e}")))?;
        let builder = match config.tls {
            MailTls::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&config.host),
            MailTls::Starttls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&config.host)
                .map_err(|e| setup(format!("mail.host: {e}")))?,
            MailTls::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&config.host)
                .map_err(|e| setup(format!("mail.host: {e}")))?,
        };
        let mut builder = builder.port(config.port).timeout(Some(SMTP_TIMEOUT));
        if let (Some(user), Some(password)) = (&config.username, config.password().map_err(setup)?)
        {
            builder = builder.credentials(Credentials::new(user.clone(), password));
        }
        Ok(Mailer {
            transport: builder.build(),
            from,
            links,
            base_url: OnceLock::new(),
        })
    }

    /// Where the links of every mail point from now on (once).
    pub fn set_base_url(&self, url: &str) {
        let _ = self.base_url.set(url.trim_end_matches('/').to_string());
    }

    fn url(&self, path: &str, link: &Link) -> String {
        let base = self.base_url.get().map_or("", String::as_str);
        format!("{base}{path}?token={}", self.links.sign(link))
    }

    /// The one-click link that turns `kinds` off for `account`.
    fn unsubscribe_url(&self, account: &str, kinds: Vec<NoticeKind>) -> String {
        let link = Link::Unsubscribe {
            account: account.to_string(),
            kinds,
        };
        self.url("/notify/unsubscribe", &link)
    }

    /// The link that proves `address` is `account`'s.
    pub async fn send_verify(&self, account: &str, address: &str) -> Result<(), MailError> {
        let link = Link::Verify {
            account: account.to_string(),
            address: address.to_string(),
        };
        let body = format!(
            "Someone, probably you, asked for notices of the Go server for the account {account} at this address.\n\n\
             To receive them, open this link:\n{}\n\n\
             If it was not you, ignore this mail: nothing will be sent without that click.\n",
            self.url("/notify/verify", &link)
        );
        let message = self
            .envelope(address)?
            .subject("Confirm your address for Go server notices")
            .header(ContentType::TEXT_PLAIN)
            .body(body)
            .map_err(|e| MailError::Build(e.to_string()))?;
        self.send(message).await
    }

    /// One notice or a digest of several, to `address`.
    pub async fn send_notices(
        &self,
        account: &str,
        address: &str,
        notices: &[Notice],
    ) -> Result<(), MailError> {
        let mut kinds: Vec<NoticeKind> = notices.iter().map(|n| n.kind).collect();
        kinds.sort();
        kinds.dedup();
        let subject = match notices {
            [one] => describe(one),
            many => format!("{} notices from the Go server", many.len()),
        };
        let mut body = String::new();
        for notice in notices {
            body.push_str(&format!("- {}\n", describe(notice)));
        }
        body.push_str("\nStop these mails with one click:\n");
        for kind in &kinds {
            let url = self.unsubscribe_url(account, vec![*kind]);
            body.push_str(&format!("- {}: {url}\n", kind_name(*kind)));
        }
        let all = self.unsubscribe_url(account, kinds);
        let message = self
            .envelope(address)?
            .subject(subject)
            .header(ListUnsubscribe(all))
            .header(OneClick)
            .header(ContentType::TEXT_PLAIN)
            .body(body)
            .map_err(|e| MailError::Build(e.to_string()))?;
        self.send(message).await
    }

    fn envelope(&self, address: &str) -> Result<lettre::message::MessageBuilder, MailError> {
        let to = address
            .parse::<Mailbox>()
            .map_err(|e| MailError::Build(format!("the address: {e}")))?;
        // Ours, not a default domain: a mail without its sender's Message-ID scores as spam.
        let id = format!("<{}@{}>", crate::ids::new_id(), self.from.email.domain());
        Ok(Message::builder()
            .from(self.from.clone())
            .to(to)
            .message_id(Some(id)))
    }

    async fn send(&self, message: Message) -> Result<(), MailError> {
        self.transport
            .send(message)
            .await
            .map(drop)
            .map_err(|e| MailError::Send(e.to_string()))
    }
}

/// A kind in words.
fn kind_name(kind: NoticeKind) -> &'static str {
    match kind {
        NoticeKind::YourMove => "your move",
        NoticeKind::Deadline => "deadlines",
        NoticeKind::GameEnded => "games ended",
        NoticeKind::ChallengeReceived => "challenges",
        NoticeKind::RoundPaired => "tournament rounds",
        NoticeKind::VacationEnding => "vacation ending",
    }
}

/// A notice in one line of words.
pub fn describe(n: &Notice) -> String {
    let p = &n.payload;
    let game = p.game_id.as_deref().unwrap_or("?");
    let against = p
        .opponent
        .as_ref()
        .map(|o| format!(" against {}", o.name))
        .unwrap_or_default();
    match n.kind {
        NoticeKind::YourMove => format!("It is your move in game {game}{against}"),
        NoticeKind::Deadline => format!("Your time runs out soon in game {game}{against}"),
        NoticeKind::GameEnded => match &p.result {
            Some(result) => format!("Game {game}{against} ended: {result}"),
            None => format!("Game {game}{against} ended"),
        },
        NoticeKind::ChallengeReceived => match &p.opponent {
            Some(o) => format!("{} challenges you to a game", o.name),
            None => "You have a challenge".into(),
        },
        NoticeKind::RoundPaired => match (&p.tournament_id, p.round) {
            (Some(t), Some(r)) => format!("Round {r} of tournament {t} is paired{against}"),
            _ => format!("A tournament round is paired{against}"),
        },
        NoticeKind::VacationEnding => "Your vacation is running out".into(),
    }
}
