//! Tournaments on the server: one director task per running tournament around the pure
//! core of `crate::tournament`; its log in the store; its games through the game
//! starter; its results from the game-lifecycle bus (docs/TOURNAMENTS.md §8). In a
//! cluster, one node at a time runs each director, under a lease ([`cluster`]).

pub mod channel;
pub mod cluster;
pub mod director;
pub mod entry;
mod export;
pub mod state;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{mpsc, oneshot};

use channel::Channel;
use cluster::Link;

use crate::fanout::Outbox;
use crate::ids::new_id;
use crate::protocol::{
    ErrorCode, Refusal, Role, Stage, TournamentAction, TournamentSetup, TournamentView, UserInfo,
};
use crate::store::{Claim, StoreError, TournamentEntry, TournamentRecord};
use crate::time::wall_ms;
use crate::tournament::exchange::{Person, opengotha};
use director::{Answer, Command, Deps, Reply, Request};
use entry::Entry;
use state::{Newcomer, Tournament, check_setup, fresh_secrets};

/// Tournaments a list shows at most.
pub const LISTED: u32 = 200;

/// The stage as the store's row keeps it.
pub fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Registration => "registration",
        Stage::Finished => "finished",
        _ => "running",
    }
}

/// The tournaments this node runs: one director task each, started on first use (or at
/// start for those not finished); in a cluster, those whose lease this node holds.
pub struct Tournaments {
    deps: Arc<Deps>,
    running: Mutex<HashMap<String, mpsc::Sender<Command>>>,
    channel: Arc<Channel>,
    /// This node's link to the others; None on a single node.
    link: Option<Link>,
}

/// Where the director of a tournament runs.
enum Place {
    Here(mpsc::Sender<Command>),
    /// On another node, which holds its lease.
    There,
}

fn unavailable(e: &dyn std::fmt::Display) -> Refusal {
    Refusal::new(ErrorCode::Unavailable, format!("the store failed: {e}"))
}

fn unknown(id: &str) -> Refusal {
    Refusal::new(
        ErrorCode::NotFound,
        format!("there is no tournament `{id}`"),
    )
}

/// The account a player of an imported file is, or why none: the account the file
/// names, else the one account that has the player's name.
fn match_account(
    store: &dyn crate::store::Store,
    person: &Person,
) -> Result<Result<UserInfo, String>, StoreError> {
    let usable = |u: &crate::store::UserRecord| !u.disabled && u.role != Role::Guest;
    let info = |u: crate::store::UserRecord| UserInfo {
        id: u.id,
        name: u.display_name,
        role: u.role,
    };
    let name = format!("{} {}", person.first_name, person.surname)
        .trim()
        .to_string();
    if !person.account.is_empty() {
        let found = store.user(&person.account)?.filter(usable);
        return Ok(found
            .map(info)
            .ok_or(format!("{name}: no account `{}`", person.account)));
    }
    let reversed = format!("{} {}", person.surname, person.first_name)
        .trim()
        .to_string();
    let mut found = store.users_named(&name, 2)?;
    if reversed != name {
        found.extend(store.users_named(&reversed, 2)?);
    }
    found.retain(usable);
    Ok(match found.len() {
        0 => Err(format!("{name}: no account has this name")),
        1 => Ok(info(found.remove(0))),
        _ => Err(format!(
            "{name}: several accounts have this name; name one with `tengenAccount`"
        )),
    })
}

/// A tournament folded from its log, and the number of its last entry.
fn replay(id: &str, log: &[TournamentEntry]) -> Result<(Tournament, u64), String> {
    let entries = log
        .iter()
        .map(|e| serde_json::from_str::<Entry>(&e.payload))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("tournament {id} has an unreadable entry: {e}"))?;
    let first = entries.first().ok_or("an empty log")?;
    let mut state = Tournament::created(id, first)
        .ok_or(format!("tournament {id} does not begin with its creation"))?;
    for entry in &entries[1..] {
        state.apply(entry);
    }
    Ok((state, log.last().map_or(0, |e| e.seq)))
}

impl Tournaments {
    pub fn new(deps: Deps, link: Option<Link>) -> Arc<Tournaments> {
        Arc::new(Tournaments {
            deps: Arc::new(deps),
            running: Mutex::new(HashMap::new()),
            channel: Arc::default(),
            link,
        })
    }

    async fn stored<T: Send + 'static>(
        &self,
        call: impl FnOnce(&dyn crate::store::Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, Refusal> {
        let store = self.deps.store.clone();
        tokio::task::spawn_blocking(move || call(store.as_ref()))
            .await
            .map_err(|e| unavailable(&e))?
            .map_err(|e| unavailable(&e))
    }

    /// Tournament `id` read from the store and folded, if it exists.
    async fn load(&self, id: &str) -> Result<Option<(Tournament, u64)>, Refusal> {
        let wanted = id.to_string();
        let Some((_, log)) = self.stored(move |s| s.tournament(&wanted)).await? else {
            return Ok(None);
        };
        replay(id, &log)
            .map(Some)
            .map_err(|e| Refusal::new(ErrorCode::Unavailable, e))
    }

    /// Where the director of `id` runs: here if it does, else (in a cluster, unless
    /// another node holds its lease) started here.
    async fn place(&self, id: &str) -> Result<Place, Refusal> {
        if let Some(running) = self.running_director(id) {
            return Ok(Place::Here(running));
        }
        if let Some(link) = &self.link {
            match link.claim(id).await {
                Ok(Claim::Ours(_)) => {}
                Ok(Claim::Held { .. }) => return Ok(Place::There),
                Err(StoreError::UnknownTournament { .. }) => return Err(unknown(id)),
                Err(e) => return Err(unavailable(&e)),
            }
        }
        let (state, seq) = self.load(id).await?.ok_or_else(|| unknown(id))?;
        Ok(Place::Here(self.run_here(state, seq)))
    }

    /// Starts the director of `state` here, unless one already runs.
    fn run_here(&self, state: Tournament, seq: u64) -> mpsc::Sender<Command> {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = running.get(&state.id).filter(|s| !s.is_closed()) {
            return sender.clone();
        }
        let id = state.id.clone();
        let sender = director::spawn(state, seq, self.deps.clone(), self.channel.clone());
        if let Some(link) = &self.link {
            link.serve(&id, sender.clone());
        }
        running.insert(id, sender.clone());
        sender
    }

    fn running_director(&self, id: &str) -> Option<mpsc::Sender<Command>> {
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.get(id).filter(|s| !s.is_closed()).cloned()
    }

    /// Creates a tournament that `by` directs.
    pub async fn create(
        &self,
        by: &UserInfo,
        setup: TournamentSetup,
    ) -> Result<Box<TournamentView>, Refusal> {
        if !matches!(by.role, Role::Admin | Role::Referee) {
            return Err(Refusal::new(
                ErrorCode::Forbidden,
                "only referees and admins create tournaments",
            ));
        }
        check_setup(&setup)?;
        let id = new_id();
        let first = Entry::Created {
            by: by.clone(),
            secrets: fresh_secrets(setup.regulations.rounds),
            setup,
        };
        let state = Tournament::created(&id, &first).ok_or_else(|| unknown(&id))?;
        let record = TournamentRecord {
            id: id.clone(),
            name: state.setup.name.clone(),
            created_at_ms: wall_ms(),
            stage: stage_name(Stage::Registration).to_string(),
        };
        let row = TournamentEntry {
            seq: 1,
            at_ms: record.created_at_ms,
            kind: first.kind().to_string(),
            payload: serde_json::to_string(&first).map_err(|e| unavailable(&e))?,
        };
        self.stored(move |s| s.create_tournament(&record, &row))
            .await?;
        let view = Box::new(state.view(true));
        // A new tournament's lease is free: this node takes it, else its sweep does.
        if let Some(link) = &self.link
            && !matches!(link.claim(&id).await, Ok(Claim::Ours(_)))
        {
            return Ok(view);
        }
        self.run_here(state, 1);
        Ok(view)
    }

    /// A request about tournament `id` from `user` on connection `outbox`: watching is
    /// this node's channel, the rest its director's.
    pub async fn act(
        &self,
        id: &str,
        user: Option<UserInfo>,
        action: TournamentAction,
        outbox: Outbox,
    ) -> Answer {
        match action {
            TournamentAction::WatchTournament {} => {
                // Watching first, so no event falls between the view and the watch.
                let conn = outbox.conn();
                self.channel.watch(id, outbox)?;
                match self.view(id, user.map(|u| u.id)).await {
                    Ok(view) => Ok(Some(Box::new(view))),
                    Err(refusal) => {
                        self.channel.unwatch(id, conn);
                        Err(refusal)
                    }
                }
            }
            TournamentAction::UnwatchTournament {} => {
                self.channel.unwatch(id, outbox.conn());
                Ok(None)
            }
            action => self.ask(id, Request::Act { user, action }).await?.acted(),
        }
    }

    /// Tournament `id` as it is now: from its director if it runs, else folded from the
    /// store.
    pub async fn current(&self, id: &str) -> Result<Tournament, Refusal> {
        if let Some(director) = self.running_director(id) {
            let (reply, answer) = oneshot::channel();
            if director.send(Command::Snapshot { reply }).await.is_ok()
                && let Ok(state) = answer.await
            {
                return Ok(*state);
            }
        }
        let (state, _) = self.load(id).await?.ok_or_else(|| unknown(id))?;
        Ok(state)
    }

    /// Tournament `id` as `viewer` may see it (the costs for its directors).
    pub async fn view(&self, id: &str, viewer: Option<String>) -> Result<TournamentView, Refusal> {
        let state = self.current(id).await?;
        let costs = viewer.is_some_and(|v| state.is_director(&v));
        Ok(state.view(costs))
    }

    /// Registers in tournament `id` the players of an OpenGotha file (a player list, or a
    /// whole tournament's file, whose players alone are read), as its director `by`
    /// asks. Each player is the account the file names (`tengenAccount`), else the one
    /// account whose display name is the player's first name and surname (or surname and
    /// first name) exactly; a name no account has, or several have, matches nobody. A
    /// file that does not read is `invalid_file`; a player matched to no account is
    /// `not_found`, naming each and why; then nothing changes. Returns how many were new.
    pub async fn import(&self, id: &str, by: UserInfo, xml: &str) -> Result<usize, Refusal> {
        let file = opengotha::import(xml).map_err(|e| {
            Refusal::new(
                ErrorCode::InvalidFile,
                format!("the OpenGotha file cannot be read: {e}"),
            )
        })?;
        let people = file.people.clone();
        let accounts = self
            .stored(move |s| {
                people
                    .iter()
                    .map(|p| match_account(s, p))
                    .collect::<Result<Vec<_>, StoreError>>()
            })
            .await?;
        let missing: Vec<&String> = accounts.iter().filter_map(|a| a.as_ref().err()).collect();
        if !missing.is_empty() {
            let shown: Vec<&str> = missing.iter().take(10).map(|n| n.as_str()).collect();
            let more = missing.len().saturating_sub(shown.len());
            return Err(Refusal::new(
                ErrorCode::NotFound,
                format!(
                    "{} player(s) of the file match no account here: {}{}",
                    missing.len(),
                    shown.join("; "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        let players = accounts
            .into_iter()
            .zip(file.record.field)
            .filter_map(|(account, entrant)| {
                Some(Newcomer {
                    user: account.ok()?,
                    rank: entrant.rank,
                    club: entrant.club,
                    country: entrant.country,
                })
            })
            .collect();
        let request = Request::Import { user: by, players };
        self.ask(id, request).await?.imported()
    }

    /// Sends `request` to the director of `id`, here or on the node that runs it.
    async fn ask(&self, id: &str, request: Request) -> Result<Reply, Refusal> {
        match (self.place(id).await?, &self.link) {
            (Place::Here(director), _) => Ok(director::ask(&director, request).await),
            (Place::There, Some(link)) => link.forward(id, &request).await,
            (Place::There, None) => Err(unknown(id)),
        }
    }

    /// The newest tournaments.
    pub async fn list(&self) -> Result<Vec<TournamentRecord>, Refusal> {
        self.stored(|s| s.tournaments(LISTED)).await
    }

    /// Starts the director of every tournament not finished (at start, on one node).
    pub async fn restore(&self) -> Result<usize, Refusal> {
        let ids = self.stored(|s| s.unfinished_tournaments()).await?;
        for id in &ids {
            self.place(id).await?;
        }
        Ok(ids.len())
    }

    /// In a cluster: relays the tournaments' events between the nodes, and from now on
    /// renews the leases of the directors here (stopping those another node took) and
    /// takes over the tournaments whose director's node died, every third of a lease
    /// until shutdown, when it gives its leases up.
    pub async fn join_cluster(self: &Arc<Tournaments>) -> Result<(), crate::cluster::BusError> {
        let Some(link) = &self.link else {
            return Ok(());
        };
        link.relay(self.channel.clone()).await?;
        let (me, mut stop) = (Arc::downgrade(self), self.deps.shutdown.clone());
        let mut ticks = tokio::time::interval(link.lease / 3);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    _ = stop.wait_for(|stop| *stop) => break,
                }
                let Some(tournaments) = me.upgrade() else {
                    return;
                };
                tournaments.keep().await;
            }
            if let Some(tournaments) = me.upgrade() {
                tournaments.let_go().await;
            }
        });
        Ok(())
    }

    /// One round of [`Tournaments::join_cluster`]'s upkeep.
    async fn keep(&self) {
        let Some(link) = &self.link else { return };
        let held: Vec<(String, mpsc::Sender<Command>)> = {
            let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
            running.retain(|_, s| !s.is_closed());
            running
                .iter()
                .map(|(id, s)| (id.clone(), s.clone()))
                .collect()
        };
        for (id, director) in held {
            match link.claim(&id).await {
                Ok(Claim::Ours(_)) => {}
                Ok(Claim::Held { node }) => {
                    tracing::warn!(tournament = %id, %node, "another node directs this tournament now; stopping here");
                    let _ = director.send(Command::Stop).await;
                    self.running
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id);
                }
                Err(e) => {
                    tracing::warn!(tournament = %id, error = %e, "a tournament's lease was not renewed")
                }
            }
        }
        for id in link.orphans().await {
            match self.place(&id).await {
                Ok(Place::Here(_)) => {
                    tracing::info!(tournament = %id, "took the tournament's director over")
                }
                Ok(Place::There) => {}
                Err(refusal) => {
                    tracing::warn!(tournament = %id, %refusal, "could not take a tournament over")
                }
            }
        }
    }

    /// Stops the directors here and gives their leases up (the node stops).
    async fn let_go(&self) {
        let Some(link) = &self.link else { return };
        let held: Vec<(String, mpsc::Sender<Command>)> = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        for (id, director) in held {
            let _ = director.send(Command::Stop).await;
            director.closed().await;
            link.release(&id).await;
        }
    }
}
