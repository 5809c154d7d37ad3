//! `tengen user`: operators' account commands, working on the store the configuration
//! names, the data directory's SQLite file or the PostgreSQL database (a running server
//! may share either). Passwords are read from standard input or
//! generated and printed once, never taken from the command line, where `ps` shows them.

use std::io::BufRead;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use tengen::accounts::digest;
use tengen::accounts::password::{check_new, hash_now};
use tengen::accounts::username::{GUEST_PREFIX, Username, unfolded};
use tengen::auth::display_name;
use tengen::config::StoreBackend;
use tengen::protocol::Role;
use tengen::server::{DB_FILE, open_store};
use tengen::standings::view::{ESCAPE_SCAN, Escapes};
use tengen::store::{NewInvite, Origin, Store, StoreError, UserChange, UserRecord};
use tengen::time::wall_ms;

use super::config_args::ConfigArgs;
use super::token::{parse_role, parse_ttl};

#[derive(Debug, clap::Subcommand)]
pub enum Args {
    /// Create an account; prints a generated password unless --password-stdin.
    Add {
        username: String,
        /// The name shown to others [default: the username as typed]
        #[arg(long)]
        display_name: Option<String>,
        /// player, bot, referee or admin.
        #[arg(long, default_value = "player", value_parser = parse_role)]
        role: Role,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Refuse the account's logins, refreshes and new connections; ends its sessions, and a
    /// running server on the same store ends its open connections.
    Disable {
        username: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Let a disabled account in again.
    Enable {
        username: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Change the account's role (player, bot, referee or admin); a running server on the
    /// same store ends its open connections, which come back with the new role.
    SetRole {
        username: String,
        #[arg(value_parser = parse_role)]
        role: Role,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Set a new password (generated and printed unless --password-stdin); ends every
    /// session of the account.
    ResetPassword {
        username: String,
        /// Read the new password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Print every user: id, origin, role, state, display name (tab-separated).
    List {
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Print a player's escaper record, as their profile shows it: `escapes`, the count
    /// of games they left and then lost by a claim, the forfeit limit or on time after a
    /// whole claim wait away, then the latest
    /// such games, one per line: game id, opponent, end (Unix ms) (tab-separated).
    Escapes {
        /// The player's id (any player's, with or without an account here).
        id: String,
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Print a new invite code for `auth.registration = "invite"`.
    Invite {
        /// How long the code is valid: e.g. 30m, 24h, 7d.
        #[arg(long, default_value = "7d", value_parser = parse_ttl)]
        expires: u64,
        #[command(flatten)]
        config: ConfigArgs,
    },
}

/// The store the configuration names, as `tengen serve` opens it. A SQLite store that is
/// not there yet is made only to add an account (before a server's first start), and
/// then said so: a data directory given wrong, or not given where the server's comes
/// from its service's environment, would otherwise be a new store nobody serves.
fn open(config: &ConfigArgs, to_add: bool) -> anyhow::Result<Arc<dyn Store>> {
    let config = config.load()?;
    let path = config.data_dir.join(DB_FILE);
    if config.store.backend == StoreBackend::Sqlite && !path.is_file() {
        if !to_add {
            bail!(
                "there is no game database at {} (give the server's data directory: --data DIR)",
                path.display()
            );
        }
        eprintln!(
            "there is no game database at {} yet: it is made now, and a server sees this account only if it runs with this data directory",
            path.display()
        );
    }
    tengen::config::create_data_dir(&config.data_dir)
        .with_context(|| format!("creating the data directory {}", config.data_dir.display()))?;
    Ok(open_store(&config)?)
}

/// The canonical id of an operator-given username: any valid name, reserved ones
/// included, but never a guest's.
fn username(text: &str) -> anyhow::Result<String> {
    let name = Username::canonical(text)?;
    if name.as_str().starts_with(GUEST_PREFIX) {
        bail!("usernames starting with `{GUEST_PREFIX}` are for guests");
    }
    Ok(name.into_string())
}

/// The id of the existing account `text` names: its canonical form, or the id of an
/// account from before usernames were case-folded ([`unfolded`]).
fn account_id(store: &dyn Store, text: &str) -> anyhow::Result<String> {
    let id = username(text)?;
    if store.user(&id)?.is_some() {
        return Ok(id);
    }
    Ok(unfolded(store.non_ascii_local_ids()?)
        .remove(&id)
        .unwrap_or(id))
}

/// The password from standard input's first line, checked against the policy, or a
/// generated one that is printed.
fn new_password(from_stdin: bool, username: &str) -> anyhow::Result<String> {
    if !from_stdin {
        let password = hex::encode(rand::random::<[u8; 12]>());
        println!("password: {password}");
        return Ok(password);
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading the password from standard input")?;
    let password = line.trim_end_matches(['\r', '\n']).to_string();
    check_new(&password, username)?;
    Ok(password)
}

fn change(store: &dyn Store, id: &str, change: UserChange) -> anyhow::Result<()> {
    match store.update_user(id, &change) {
        Err(StoreError::UnknownUser { .. }) => bail!("there is no user {id:?}"),
        other => Ok(other?),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args {
        Args::Add {
            username: typed,
            display_name: shown,
            role,
            password_stdin,
            config,
        } => {
            let id = username(&typed)?;
            let shown = display_name(shown.as_deref().unwrap_or(typed.trim()))
                .map_err(|why| anyhow::anyhow!("the display name {why}"))?
                .to_string();
            let store = open(&config, true)?;
            if store.user(&id)?.is_some() {
                bail!("the username {id:?} is taken");
            }
            let password = new_password(password_stdin, &id)?;
            let user = UserRecord {
                id: id.clone(),
                origin: Origin::Local,
                display_name: shown,
                role,
                password_hash: Some(hash_now(&password)?),
                disabled: false,
                created_at_ms: wall_ms(),
            };
            match store.create_user(&user, None, wall_ms()) {
                Err(StoreError::DuplicateUser { .. }) => bail!("the username {id:?} is taken"),
                other => other?,
            }
            eprintln!("added {id}");
        }
        Args::Disable {
            username: u,
            config,
        } => {
            let store = open(&config, false)?;
            let id = account_id(&*store, &u)?;
            change(&*store, &id, UserChange::Disabled(true))?;
            eprintln!(
                "disabled {id}; its sessions are revoked, and a running server ends its connections"
            );
        }
        Args::Enable {
            username: u,
            config,
        } => {
            let store = open(&config, false)?;
            let id = account_id(&*store, &u)?;
            change(&*store, &id, UserChange::Disabled(false))?;
            eprintln!("enabled {id}");
        }
        Args::SetRole {
            username: u,
            role,
            config,
        } => {
            if role == Role::Guest {
                bail!("guests are made by POST /api/auth/guest, not by a role change");
            }
            let store = open(&config, false)?;
            let id = account_id(&*store, &u)?;
            change(&*store, &id, UserChange::Role(role))?;
            eprintln!(
                "{id} is now {}; a running server ends its connections, and its tokens now carry that role",
                serde_json::to_value(role)?
            );
        }
        Args::ResetPassword {
            username: u,
            password_stdin,
            config,
        } => {
            let store = open(&config, false)?;
            let id = account_id(&*store, &u)?;
            match store.user(&id)? {
                Some(user) if user.origin == Origin::Local => {}
                Some(_) => bail!("{id:?} is not an account registered here, so it has no password"),
                None => bail!("there is no user {id:?}"),
            }
            let password = new_password(password_stdin, &id)?;
            change(&*store, &id, UserChange::Password(hash_now(&password)?))?;
            eprintln!("reset the password of {id}; its sessions are revoked");
        }
        Args::List { config } => list(&*open(&config, false)?)?,
        Args::Escapes { id, config } => {
            let store = open(&config, false)?;
            let escapes = Escapes::of(&id, &store.forfeit_losses(&id, ESCAPE_SCAN)?);
            println!("escapes\t{}", escapes.count);
            for e in &escapes.recent {
                println!("{}\t{}\t{}", e.game_id, e.opponent, e.at);
            }
        }
        Args::Invite { expires, config } => {
            let store = open(&config, false)?;
            let code = hex::encode(rand::random::<[u8; 12]>());
            let now = wall_ms();
            let ttl_ms = i64::try_from(expires.saturating_mul(1000)).unwrap_or(i64::MAX);
            store.create_invite(&NewInvite {
                hash: digest(&code),
                created_at_ms: now,
                expires_at_ms: now.saturating_add(ttl_ms),
            })?;
            println!("{code}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(store: &dyn Store) -> anyhow::Result<()> {
    const PAGE: u32 = 500;
    let mut after = String::new();
    loop {
        let page = store.users(&after, PAGE)?;
        for u in &page {
            let role = serde_json::to_value(u.role)?;
            println!(
                "{}\t{}\t{}\t{}\t{}",
                u.id,
                u.origin.as_str(),
                role.as_str().unwrap_or("?"),
                if u.disabled { "disabled" } else { "enabled" },
                u.display_name
            );
        }
        match page.last() {
            Some(last) if page.len() == PAGE as usize => after = last.id.clone(),
            _ => return Ok(()),
        }
    }
}
