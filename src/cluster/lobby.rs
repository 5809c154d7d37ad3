//! One lobby across the nodes (docs/ARCHITECTURE.md §8, "The lobby across nodes").
//!
//! Every node keeps the whole lobby: its own items, and a copy of the others' kept up to
//! date by their news on `<cluster>.lobby` ([`Change`]). A challenge stays with the node
//! it was posted on: accepting, declining or cancelling it elsewhere is a request to
//! that node on `<cluster>.node.<id>.lobby` ([`Ask`]), which rules on it as a single
//! server would, so two accepts can never both win. Frames for one user or for every
//! lobby watcher travel as news too, with the user id inside (never in a subject).
//!
//! Automatch across nodes is in [`super::automatch`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde::Serialize;
use tokio::sync::mpsc;

use futures_util::future::BoxFuture;

use super::lobby_wire::{Answer, Ask, News, Request};
use super::members::{BEAT, Beat, Heard, Members};
use super::numbers::Numbers;
use super::{Bus, BusError};
use crate::lobby::{Change, Lobby, Peers};
use crate::protocol::{CalledGame, ErrorCode, GameSummary, Refusal, UserInfo};

/// What this node's server answers the other nodes with: the lobby, and the parts above
/// the cluster that start games and hold rooms. The cluster holds it weakly and reaches
/// nothing else above it.
pub trait Home: Send + Sync + 'static {
    fn lobby(&self) -> &Lobby;
    /// Accepts a challenge held here, starting its game.
    fn accept<'a>(
        &'a self,
        accepter: &'a UserInfo,
        challenge_id: &'a str,
        seed: Option<&'a str>,
    ) -> BoxFuture<'a, Result<String, Refusal>>;
    /// The games running on this node, sorted by id.
    fn local_games(&self) -> BoxFuture<'_, Vec<GameSummary>>;
    /// The referee calls of the games running on this node.
    fn local_referee_calls<'a>(
        &'a self,
        user: &'a UserInfo,
    ) -> BoxFuture<'a, (Vec<CalledGame>, Vec<GameSummary>)>;
    /// One automatch round, as on a single node.
    fn automatch_round(&self) -> BoxFuture<'_, ()>;
    /// A node went: the rooms here stop counting its connections.
    fn node_gone<'a>(&'a self, node: &'a str) -> BoxFuture<'a, ()>;
    /// Ready once the server begins to shut down.
    fn stopped(&self) -> BoxFuture<'static, ()>;
}

/// How long a node waits for another's answer to an accept or a withdrawal.
pub(super) const ASK_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the game list waits for each node's running games.
const LIST_TIMEOUT: Duration = Duration::from_millis(500);

/// One message for the bus; a single task sends them all, so they leave in order.
enum Out {
    /// News, numbered as it leaves.
    News(Box<Change>),
    /// An answer to another node's request.
    Answer { to: String, answer: Answer },
    /// A snapshot for another node, made as it leaves: it holds exactly the changes of
    /// the news numbered up to the last one that left before it.
    Snapshot { to: String },
    /// This node's heartbeat, with the number of its latest news.
    Beat,
}

/// The lobby's way to the other nodes.
#[derive(Clone)]
pub struct Link {
    pub(super) bus: Bus,
    out: mpsc::UnboundedSender<Out>,
    pub(super) members: Arc<Members>,
    /// The automatch requests made on this node and not over yet, by user id.
    pub(super) requests: Arc<Mutex<HashMap<String, Request>>>,
    /// How far each other node's news has been applied here.
    numbers: Arc<Numbers>,
}

fn json<T: Serialize>(value: &T) -> Bytes {
    // Our own types always serialise; an empty payload is refused by every reader.
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

fn unavailable(e: impl std::fmt::Display) -> Refusal {
    Refusal::new(
        ErrorCode::Unavailable,
        format!("another node could not be reached: {e}"),
    )
}

impl Link {
    fn send(&self, out: Out) {
        // Fails only once the sending task is gone, when the server is stopping.
        let _ = self.out.send(out);
    }

    /// The subject where node `node` takes the lobby's requests.
    fn asks_of(&self, node: &str) -> String {
        self.bus.subject(&format!("node.{node}.lobby"))
    }

    pub(super) async fn ask(
        &self,
        node: &str,
        ask: &Ask,
        timeout: Duration,
    ) -> Result<Answer, Refusal> {
        let reply = (self.bus.request(self.asks_of(node), json(ask), timeout))
            .await
            .map_err(unavailable)?;
        serde_json::from_slice(&reply).map_err(unavailable)
    }

    /// Accepts a challenge held by node `home`, which creates the game.
    pub async fn accept_at(
        &self,
        home: &str,
        accepter: &UserInfo,
        challenge_id: &str,
        seed: Option<&str>,
    ) -> Result<String, Refusal> {
        let ask = Ask::Accept {
            accepter: accepter.clone(),
            challenge_id: challenge_id.to_string(),
            seed: seed.map(str::to_string),
        };
        match self.ask(home, &ask, ASK_TIMEOUT).await? {
            Answer::Accepted { game_id } => Ok(game_id),
            other => Err(refused(other)),
        }
    }

    /// Asks every other node alive at once; a node that does not answer in
    /// [`LIST_TIMEOUT`] is left out.
    async fn ask_all(&self, ask: &Ask) -> Vec<Answer> {
        let nodes = self.members.others();
        let asks = nodes.iter().map(|node| self.ask(node, ask, LIST_TIMEOUT));
        let answers = futures_util::future::join_all(asks).await;
        answers.into_iter().filter_map(Result::ok).collect()
    }

    /// This node's running `games` and the other nodes', sorted by id.
    pub async fn with_games_elsewhere(&self, mut games: Vec<GameSummary>) -> Vec<GameSummary> {
        for answer in self.ask_all(&Ask::Games {}).await {
            if let Answer::Games { games: theirs } = answer {
                games.extend(theirs);
            }
        }
        once_each(&mut games, |g| &g.game_id);
        games
    }

    /// The referee calls of this node's games and the other nodes', sorted by id.
    pub async fn with_referee_calls_elsewhere(
        &self,
        user: &UserInfo,
        (mut games, mut assigned): (Vec<CalledGame>, Vec<GameSummary>),
    ) -> (Vec<CalledGame>, Vec<GameSummary>) {
        let ask = Ask::RefereeCalls { user: user.clone() };
        for answer in self.ask_all(&ask).await {
            if let Answer::RefereeCalls {
                games: called,
                assigned: mine,
            } = answer
            {
                games.extend(called);
                assigned.extend(mine);
            }
        }
        once_each(&mut games, |c| &c.game.game_id);
        once_each(&mut assigned, |g| &g.game_id);
        (games, assigned)
    }

    /// Returns once this node must stop: another process runs under its node id,
    /// started first ([`Members::yields_to`]).
    pub async fn displaced(&self) -> BusError {
        let twin = self.members.yielded().await;
        tracing::error!(%twin, "another node runs under this node's id; this one stops");
        BusError::SameId {
            twin: twin.to_string(),
        }
    }

    /// Tells the others this node is leaving, so they drop its items now rather than
    /// after its silence, and waits until NATS has the goodbye (the process ends next).
    pub async fn leave(&self) {
        let goodbye = json(&self.members.beat(true, 0));
        let sent = self.bus.publish(self.bus.subject("nodes"), goodbye).await;
        if let Err(e) = sent {
            tracing::warn!(error = %e, "the other nodes could not be told goodbye");
        } else if let Err(e) = self.bus.client().flush().await {
            tracing::warn!(error = %e, "the goodbye to the other nodes may be lost");
        }
    }

    /// Copies node `node`'s items here.
    async fn sync(&self, hub: &dyn Home, node: &Arc<str>) {
        match self.ask(node, &Ask::Snapshot {}, ASK_TIMEOUT).await {
            Ok(Answer::Snapshot { changes, boot, seq }) => {
                hub.lobby().replace(node, changes, seq);
                self.numbers.copied(node, boot, seq);
            }
            Ok(_) => tracing::warn!(%node, "a node answered a snapshot with something else"),
            Err(e) => tracing::warn!(%node, error = %e, "a node's lobby could not be copied"),
        }
    }
}

impl Peers for Link {
    fn share(&self, change: Change) {
        self.send(Out::News(Box::new(change)));
    }

    fn forget_request(&self, user: &str) -> bool {
        self.requests().remove(user).is_some()
    }

    fn cancel_automatch<'a>(
        &'a self,
        lobby: &'a Lobby,
        user: &'a str,
    ) -> BoxFuture<'a, Result<bool, Refusal>> {
        Box::pin(self.cancel_at_leader(lobby, user))
    }

    fn withdraw_at<'a>(
        &'a self,
        home: &'a str,
        challenge_id: &'a str,
        user: &'a UserInfo,
        decline: bool,
    ) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async move {
            let ask = Ask::Withdraw {
                user: user.clone(),
                challenge_id: challenge_id.to_string(),
                decline,
            };
            match self.ask(home, &ask, ASK_TIMEOUT).await? {
                Answer::Done {} => Ok(()),
                other => Err(refused(other)),
            }
        })
    }
}

/// Sorts games by id and keeps one of each: a game mirrored on a node that does not own
/// it is listed by its owner too.
fn once_each<T>(games: &mut Vec<T>, id: impl Fn(&T) -> &String) {
    games.sort_by(|a, b| id(a).cmp(id(b)));
    games.dedup_by(|a, b| id(a) == id(b));
}

/// The refusal an answer carries (an unexpected answer is the other node's fault).
pub(super) fn refused(answer: Answer) -> Refusal {
    match answer {
        Answer::Refused { code, message } => Refusal::new(code, message),
        _ => unavailable("it answered something else"),
    }
}

/// Joins `hub`'s lobby to the other nodes on `bus`: listens to their news, requests and
/// heartbeats, starts its own, and returns (with the way to the others) once it has
/// copied the items of every node heard in one heartbeat's time.
pub async fn start(hub: Arc<dyn Home>, bus: Bus) -> Result<Link, BusError> {
    let (out, queue) = mpsc::unbounded_channel();
    let link = Link {
        members: Arc::new(Members::new(bus.node())),
        bus: bus.clone(),
        out,
        requests: Arc::default(),
        numbers: Arc::default(),
    };
    let news = bus.subscribe(bus.subject("lobby")).await?;
    let asks = bus.subscribe(link.asks_of(bus.node())).await?;
    let beats = bus.subscribe(bus.subject("nodes")).await?;
    hub.lobby().link(Arc::new(link.clone()));
    tokio::spawn(send_all(
        bus,
        link.members.clone(),
        Arc::downgrade(&hub),
        queue,
    ));
    tokio::spawn(hear_news(Arc::downgrade(&hub), link.clone(), news));
    tokio::spawn(answer_asks(Arc::downgrade(&hub), link.clone(), asks));
    tokio::spawn(hear_beats(Arc::downgrade(&hub), link.clone(), beats));
    tokio::spawn(beat(Arc::downgrade(&hub), link.clone()));
    tokio::time::sleep(BEAT + BEAT / 4).await;
    if let Some(twin) = link.members.yielded_now() {
        return Err(BusError::SameId {
            twin: twin.to_string(),
        });
    }
    for node in link.members.others() {
        link.sync(&*hub, &node).await;
    }
    Ok(link)
}

/// Sends every queued message, in order, numbering the news, for as long as the lobby
/// lives.
async fn send_all(
    bus: Bus,
    members: Arc<Members>,
    hub: Weak<dyn Home>,
    mut queue: mpsc::UnboundedReceiver<Out>,
) {
    let boot = members.boot();
    let mut seq = 0;
    while let Some(out) = queue.recv().await {
        let (subject, payload) = match out {
            Out::News(change) => {
                seq += 1;
                let news = News {
                    node: bus.node().to_string(),
                    boot,
                    seq,
                    change: *change,
                };
                (bus.subject("lobby"), json(&news))
            }
            Out::Answer { to, answer } => (to, json(&answer)),
            Out::Snapshot { to } => {
                let Some(hub) = hub.upgrade() else { return };
                let changes = hub.lobby().snapshot();
                (to, json(&Answer::Snapshot { changes, boot, seq }))
            }
            Out::Beat => (bus.subject("nodes"), json(&members.beat(false, seq))),
        };
        if let Err(e) = bus.publish(subject, payload).await {
            tracing::warn!(error = %e, "lobby news could not be sent");
        }
    }
}

/// Applies the other nodes' news; after a gap in a node's numbers, copies its items
/// again.
async fn hear_news(hub: Weak<dyn Home>, link: Link, mut news: async_nats::Subscriber) {
    while let Some(message) = news.next().await {
        let Some(hub) = hub.upgrade() else { return };
        match serde_json::from_slice::<News>(&message.payload) {
            Ok(news) if news.node != link.bus.node() => {
                let gap = link.numbers.heard(&news.node, news.boot, news.seq);
                let node: Arc<str> = news.node.into();
                hub.lobby().apply(&node, news.change, news.seq);
                if gap {
                    tracing::warn!(%node, "lobby news from a node was lost; copying its items again");
                    let link = link.clone();
                    tokio::spawn(async move { link.sync(&*hub, &node).await });
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "unreadable lobby news"),
        }
    }
}

/// Answers the other nodes' requests, each in its own task (an accept waits for the
/// store); the answers go through the ordered queue, after the news they caused.
async fn answer_asks(hub: Weak<dyn Home>, link: Link, mut asks: async_nats::Subscriber) {
    while let Some(message) = asks.next().await {
        let Some(reply) = message.reply else { continue };
        let ask = match serde_json::from_slice::<Ask>(&message.payload) {
            Ok(ask) => ask,
            Err(e) => {
                // A node of another version, say: it hears why at once, not after a timeout.
                tracing::warn!(error = %e, "an unreadable lobby request");
                let answer = Answer::Refused {
                    code: ErrorCode::BadRequest,
                    message: format!("node {} cannot read this request: {e}", link.bus.node()),
                };
                link.send(Out::Answer {
                    to: reply.to_string(),
                    answer,
                });
                continue;
            }
        };
        let Some(hub) = hub.upgrade() else { return };
        let link = link.clone();
        tokio::spawn(async move {
            let pair = matches!(ask, Ask::Automatch { .. });
            link.send(answer(&*hub, ask, reply.to_string()).await);
            // As on a single node, a new request is paired at once if it can be.
            if pair {
                hub.automatch_round().await;
            }
        });
    }
}

/// What to send back to `to` for `ask`.
async fn answer(hub: &dyn Home, ask: Ask, to: String) -> Out {
    let done = |r: Result<Answer, Refusal>| {
        r.unwrap_or_else(|r| Answer::Refused {
            code: r.code,
            message: r.message,
        })
    };
    let answer = match ask {
        Ask::Snapshot {} => return Out::Snapshot { to },
        Ask::Accept {
            accepter,
            challenge_id,
            seed,
        } => done(
            (hub.accept(&accepter, &challenge_id, seed.as_deref()).await)
                .map(|game_id| Answer::Accepted { game_id }),
        ),
        Ask::Withdraw {
            user,
            challenge_id,
            decline,
        } => done((hub.lobby().withdraw(&challenge_id, &user, decline)).map(|()| Answer::Done {})),
        Ask::Games {} => Answer::Games {
            games: hub.local_games().await,
        },
        Ask::RefereeCalls { user } => {
            let (games, assigned) = hub.local_referee_calls(&user).await;
            Answer::RefereeCalls { games, assigned }
        }
        Ask::Automatch { request } => {
            hub.lobby().automatch.put(request.seeker());
            Answer::Done {}
        }
        Ask::AutomatchCancel { user } => match hub.lobby().cancel_here(&user) {
            true => Answer::Done {},
            false => Answer::Refused {
                code: ErrorCode::NotFound,
                message: "you are not waiting for an automatch".into(),
            },
        },
    };
    Out::Answer { to, answer }
}

/// Notes the other nodes' heartbeats: copies the items of a node new or restarted, or
/// whose news said by its previous heartbeat (a second ago) has not all come; forgets
/// those of one that left.
async fn hear_beats(hub: Weak<dyn Home>, link: Link, mut beats: async_nats::Subscriber) {
    let mut said: HashMap<Arc<str>, u64> = HashMap::new();
    while let Some(message) = beats.next().await {
        let Ok(beat) = serde_json::from_slice::<Beat>(&message.payload) else {
            continue;
        };
        let Some(hub) = hub.upgrade() else { return };
        // Another process under this node's id, started first: this one stops (the
        // server waits on `Members::yielded`), and makes nothing of the other meanwhile.
        if link.members.yields_to(&beat) {
            continue;
        }
        let Some((node, heard)) = link.members.heard(&beat) else {
            continue;
        };
        let link = link.clone();
        let before = said.insert(node.clone(), beat.news);
        match heard {
            Heard::Known => {
                if before.is_some_and(|seq| link.numbers.behind(&node, beat.boot, seq)) {
                    tracing::warn!(%node, "lobby news from a node was lost; copying its items again");
                    tokio::spawn(async move { link.sync(&*hub, &node).await });
                }
            }
            Heard::Left => {
                tokio::spawn(async move { link.gone(&*hub, &node).await });
            }
            Heard::New | Heard::Restarted => {
                tracing::info!(%node, ?heard, "a node joined the lobby");
                tokio::spawn(async move {
                    if heard == Heard::Restarted {
                        link.gone(&*hub, &node).await;
                    }
                    link.sync(&*hub, &node).await
                });
            }
        }
    }
}

/// Says this node is alive every [`BEAT`] and forgets the nodes gone silent, until the
/// server begins to shut down ([`Link::leave`] says goodbye).
async fn beat(hub: Weak<dyn Home>, link: Link) {
    let Some(mut stopped) = hub.upgrade().map(|h| h.stopped()) else {
        return;
    };
    let mut every = tokio::time::interval(BEAT);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = &mut stopped => return,
        }
        let Some(hub) = hub.upgrade() else { return };
        link.send(Out::Beat);
        for node in link.members.reap() {
            tracing::info!(%node, "a node went silent; its lobby items go");
            // Not awaited here: making requests again must not delay the heartbeat.
            let (hub, link) = (hub.clone(), link.clone());
            tokio::spawn(async move { link.gone(&*hub, &node).await });
        }
    }
}
