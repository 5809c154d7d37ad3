//! Automatch (client-protocol/lobby.md#automatch): players wait with what they accept,
//! and each round pairs the two closest in rating whose wishes meet, within a rating
//! window that widens while they wait; a player nobody fits may get a bot whose standing
//! offer admits the game. The pairing is a pure function of the waiting list, the bots
//! and the time; the hub runs the rounds and starts the games.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::clock::TimeControl;
use crate::protocol::{BotListing, ColorChoice, GameSettings, Speed, UserInfo};
use crate::rating::Rank;
use crate::rules::HalfPoints;

/// The rating gap a new request accepts: two ranks.
pub const FIRST_WINDOW: f64 = 200.0;
/// How much the window widens at each step of waiting.
pub const WINDOW_GROWTH: f64 = 100.0;
/// How long one step of waiting is.
pub const WINDOW_STEP: Duration = Duration::from_secs(10);
/// The widest the window gets (ten ranks), reached after 80 s.
pub const MAX_WINDOW: f64 = 1000.0;
/// How often the hub runs a round, besides one at every new request.
pub const ROUND_EVERY: Duration = Duration::from_secs(1);

/// The board sizes an automatch may ask for.
pub const SIZES: [u8; 3] = [9, 13, 19];
/// Moves per player the speed classes assume when they add up a clock's time.
const MOVES: u64 = 40;
const MINUTE: u64 = 60_000;

impl Speed {
    /// The class of a time control, by the time it gives a player for a game of
    /// [`MOVES`] moves: main time plus 40 times the time per move after it (a byo-yomi
    /// period, a Fischer increment, a Canadian block divided by its moves, a simple
    /// clock's time per move). Up to 10 minutes is blitz, up to 60 live, more (or no
    /// clock) long.
    pub fn of(clock: &TimeControl) -> Speed {
        let total = match *clock {
            TimeControl::None => return Speed::Long,
            TimeControl::Absolute { main_ms } => main_ms,
            TimeControl::Fischer {
                main_ms,
                increment_ms,
                ..
            } => main_ms + MOVES * increment_ms,
            TimeControl::Byoyomi {
                main_ms, period_ms, ..
            } => main_ms + MOVES * period_ms,
            TimeControl::Canadian {
                main_ms,
                moves,
                block_ms,
            } => main_ms + MOVES * block_ms / u64::from(moves.max(1)),
            TimeControl::Simple { per_move_ms } => MOVES * per_move_ms,
        };
        match total {
            t if t <= 10 * MINUTE => Speed::Blitz,
            t if t <= 60 * MINUTE => Speed::Live,
            _ => Speed::Long,
        }
    }

    /// The clock an automatch game of this class gets: byo-yomi, 3 min + 3×10 s (blitz),
    /// 10 min + 5×30 s (live), 60 min + 5×60 s (long).
    pub fn clock(self) -> TimeControl {
        let (main_ms, periods, period_ms) = match self {
            Speed::Blitz => (3 * MINUTE, 3, 10_000),
            Speed::Live => (10 * MINUTE, 5, 30_000),
            Speed::Long => (60 * MINUTE, 5, 60_000),
        };
        TimeControl::Byoyomi {
            main_ms,
            periods,
            period_ms,
        }
    }
}

/// What a player asks for; checked by [`Wish::new`], so sizes and speeds are never empty
/// (nodes of a cluster pass checked wishes to each other).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Wish {
    sizes: Vec<u8>,
    speeds: Vec<Speed>,
    pub rated: bool,
    /// A handicap from the rank difference is acceptable.
    pub handicap: bool,
}

impl Wish {
    /// A wish with at least one size (each 9, 13 or 19) and one speed; duplicates go.
    pub fn new(
        mut sizes: Vec<u8>,
        mut speeds: Vec<Speed>,
        rated: bool,
        handicap: bool,
    ) -> Result<Wish, String> {
        if let Some(bad) = sizes.iter().find(|s| !SIZES.contains(s)) {
            return Err(format!("sizes: an automatch is on 9, 13 or 19, not {bad}"));
        }
        sizes.sort_unstable();
        sizes.dedup();
        speeds.sort_unstable();
        speeds.dedup();
        if sizes.is_empty() || speeds.is_empty() {
            return Err("sizes and speeds must each name at least one".into());
        }
        Ok(Wish {
            sizes,
            speeds,
            rated,
            handicap,
        })
    }

    /// The game two wishes agree on: the largest common size and the fastest common speed.
    fn meet(&self, other: &Wish) -> Option<(u8, Speed)> {
        if self.rated != other.rated {
            return None;
        }
        let size = self.sizes.iter().rev().find(|s| other.sizes.contains(s))?;
        let speed = self.speeds.iter().find(|s| other.speeds.contains(s))?;
        Some((*size, *speed))
    }
}

/// A player waiting for an automatch.
#[derive(Debug, Clone)]
pub struct Seeker {
    pub user: UserInfo,
    /// Their overall rating when they asked.
    pub rating: f64,
    pub wish: Wish,
    pub since: Instant,
}

/// The rating gap a request accepts after waiting `waited`.
pub fn window(waited: Duration) -> f64 {
    let steps = (waited.as_millis() / WINDOW_STEP.as_millis()) as f64;
    (FIRST_WINDOW + WINDOW_GROWTH * steps).min(MAX_WINDOW)
}

/// A bot that may be matched, with its overall rating.
#[derive(Debug, Clone)]
pub struct BotSeat {
    pub listing: BotListing,
    pub rating: f64,
    /// Whether it has an account here, without which it plays unrated games only (a
    /// token minted for a name, as `tengen token` does, names no account).
    pub rated: bool,
}

/// A game a round decided on, as a challenge from `first` accepted by `second`: with
/// `"color": "black"` (a handicap or 让先) `first` is the weaker and takes Black; with a
/// nigiri the draw is made for `first`.
#[derive(Debug, Clone)]
pub struct Pairing {
    pub first: UserInfo,
    pub second: UserInfo,
    pub settings: GameSettings,
}

/// The settings of a game between ratings `first` and `second`: even with nigiri unless
/// both accept a handicap and the rank difference gives stones. Then the weaker player
/// takes Black; on 19x19 one rank is one stone, on smaller boards a rank is worth less
/// (× size²/361), rounded; one stone is 让先 (Black, no komi), two to nine a handicap
/// with no komi, Black giving back the stones' compensation at the count (docs/RULES.md §7.3).
/// Returns the settings and whether `first` is the weaker (takes Black).
pub fn terms(
    first: f64,
    second: f64,
    size: u8,
    speed: Speed,
    rated: bool,
    handicap: bool,
) -> (GameSettings, bool) {
    let mut settings = GameSettings {
        board_size: size,
        clock: speed.clock(),
        rated,
        ..GameSettings::default()
    };
    let ranks = rank_index(first).abs_diff(rank_index(second));
    let area = f64::from(size).powi(2) / 361.0;
    let stones = (f64::from(ranks) * area).round().min(9.0) as u8;
    if !handicap || stones == 0 {
        return (settings.with_defaults(), false);
    }
    settings.color = ColorChoice::Black;
    settings.komi = Some(HalfPoints(0));
    if stones >= 2 {
        settings.handicap = stones;
    }
    (settings.with_defaults(), first < second)
}

/// Ranks counted from 30k = 0 up to 9d = 38.
fn rank_index(rating: f64) -> u8 {
    match Rank::of(rating) {
        Rank::Kyu(k) => 30 - k,
        Rank::Dan(d) => 29 + d,
    }
}

/// The pairs a round makes among `seekers` at `now`, by index: a pair's wishes meet and
/// their gap is within the longer waiter's window; the closest pair goes first (ties:
/// the one waiting longest), and each seeker is in one pair at most. Two users `apart`
/// says must not meet (one blocked the other) are never a pair.
pub fn pairs(
    seekers: &[Seeker],
    now: Instant,
    apart: &dyn Fn(&str, &str) -> bool,
) -> Vec<(usize, usize)> {
    let mut candidates = Vec::new();
    for (i, a) in seekers.iter().enumerate() {
        for (j, b) in seekers.iter().enumerate().skip(i + 1) {
            if a.user.id == b.user.id
                || a.wish.meet(&b.wish).is_none()
                || apart(&a.user.id, &b.user.id)
            {
                continue;
            }
            let gap = (a.rating - b.rating).abs();
            let since = a.since.min(b.since);
            if gap <= window(now.saturating_duration_since(since)) {
                candidates.push((gap, since, i, j));
            }
        }
    }
    candidates.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut taken = vec![false; seekers.len()];
    let mut made = Vec::new();
    for (_, _, i, j) in candidates {
        if !taken[i] && !taken[j] {
            taken[i] = true;
            taken[j] = true;
            made.push((i, j));
        }
    }
    made
}

/// The settings of a game between two seekers whose wishes meet.
fn pairing(a: &Seeker, b: &Seeker) -> Option<Pairing> {
    let (size, speed) = a.wish.meet(&b.wish)?;
    let handicap = a.wish.handicap && b.wish.handicap;
    let (settings, a_black) = terms(a.rating, b.rating, size, speed, a.wish.rated, handicap);
    let (first, second) = if a_black || settings.color == ColorChoice::Nigiri {
        (a.user.clone(), b.user.clone())
    } else {
        (b.user.clone(), a.user.clone())
    };
    Some(Pairing {
        first,
        second,
        settings,
    })
}

/// The bot for a seeker nobody else fits: the closest in rating within the seeker's
/// window whose offer admits a game the seeker wants (the largest size, then the
/// fastest speed it admits).
pub fn bot_for(seeker: &Seeker, bots: &[BotSeat], now: Instant) -> Option<Pairing> {
    let reach = window(now.saturating_duration_since(seeker.since));
    let mut best: Option<(f64, Pairing)> = None;
    for bot in bots {
        let gap = (seeker.rating - bot.rating).abs();
        if bot.listing.user.id == seeker.user.id
            || gap > reach
            || best.as_ref().is_some_and(|(g, _)| *g <= gap)
            || (seeker.wish.rated && !(bot.rated && bot.listing.user.role.may_play_rated()))
        {
            continue;
        }
        let offered = seeker.wish.sizes.iter().rev().find_map(|&size| {
            seeker.wish.speeds.iter().find_map(|&speed| {
                let handicap = seeker.wish.handicap && bot.listing.offer.max_handicap > 0;
                let (settings, seeker_black) = terms(
                    seeker.rating,
                    bot.rating,
                    size,
                    speed,
                    seeker.wish.rated,
                    handicap,
                );
                bot.listing.offer.admits(&settings).ok()?;
                let (first, second) = if seeker_black || settings.color == ColorChoice::Nigiri {
                    (seeker.user.clone(), bot.listing.user.clone())
                } else {
                    (bot.listing.user.clone(), seeker.user.clone())
                };
                Some(Pairing {
                    first,
                    second,
                    settings,
                })
            })
        });
        if let Some(pairing) = offered {
            best = Some((gap, pairing));
        }
    }
    best.map(|(_, p)| p)
}

/// The players waiting, one request each.
#[derive(Default)]
pub struct Queue {
    waiting: Mutex<Vec<Seeker>>,
}

impl Queue {
    /// Adds a request, replacing the user's waiting one (whose waiting time is lost).
    pub fn put(&self, seeker: Seeker) {
        let mut waiting = self.lock();
        waiting.retain(|s| s.user.id != seeker.user.id);
        waiting.push(seeker);
    }

    /// Withdraws the user's request; false when there was none.
    pub fn cancel(&self, user_id: &str) -> bool {
        let mut waiting = self.lock();
        let before = waiting.len();
        waiting.retain(|s| s.user.id != user_id);
        waiting.len() != before
    }

    /// Takes every request out (for another node to queue: see [`crate::cluster::lobby`]).
    pub fn take_all(&self) -> Vec<Seeker> {
        std::mem::take(&mut *self.lock())
    }

    /// Whether anyone is waiting (a round without seekers needs no bots' ratings).
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// One round at `now`: takes out every seeker paired (people first, then bots for
    /// those no person fits), skipping seekers `can_play` refuses (no free game slot) and
    /// never pairing two users `apart` says must not meet.
    pub fn round(
        &self,
        now: Instant,
        bots: &[BotSeat],
        can_play: impl Fn(&str) -> bool,
        apart: impl Fn(&str, &str) -> bool,
    ) -> Vec<(Pairing, Vec<Seeker>)> {
        let mut waiting = self.lock();
        let (ready, resting): (Vec<Seeker>, Vec<Seeker>) =
            waiting.drain(..).partition(|s| can_play(&s.user.id));
        let mut made = Vec::new();
        let mut paired = vec![false; ready.len()];
        for (i, j) in pairs(&ready, now, &apart) {
            if let Some(p) = pairing(&ready[i], &ready[j]) {
                paired[i] = true;
                paired[j] = true;
                made.push((p, vec![ready[i].clone(), ready[j].clone()]));
            }
        }
        let mut busy_bots: Vec<String> = Vec::new();
        let mut left = resting;
        for (seeker, paired) in ready.into_iter().zip(paired) {
            if paired {
                continue;
            }
            let free: Vec<BotSeat> = bots
                .iter()
                .filter(|b| {
                    let bot = &b.listing.user.id;
                    !busy_bots.contains(bot) && can_play(bot) && !apart(&seeker.user.id, bot)
                })
                .cloned()
                .collect();
            match bot_for(&seeker, &free, now) {
                Some(p) => {
                    let bot = if p.first.id == seeker.user.id {
                        &p.second
                    } else {
                        &p.first
                    };
                    busy_bots.push(bot.id.clone());
                    made.push((p, vec![seeker]));
                }
                None => left.push(seeker),
            }
        }
        *waiting = left;
        made
    }

    /// Puts back seekers whose game could not be started, unless they asked again since.
    pub fn put_back(&self, seekers: Vec<Seeker>) {
        let mut waiting = self.lock();
        for seeker in seekers {
            if !waiting.iter().any(|s| s.user.id == seeker.user.id) {
                waiting.push(seeker);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Seeker>> {
        // A panic while holding the list leaves it whole (every change is one call).
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{BotOffer, Role};
    use crate::rules::KoRule;

    fn user(id: &str, role: Role) -> UserInfo {
        UserInfo {
            id: id.into(),
            name: id.into(),
            role,
        }
    }

    fn seeker(id: &str, rating: f64, sizes: &[u8], since: Instant) -> Seeker {
        Seeker {
            user: user(id, Role::Player),
            rating,
            wish: Wish::new(sizes.to_vec(), vec![Speed::Live], false, false).unwrap(),
            since,
        }
    }

    fn bot(id: &str, rating: f64, offer: BotOffer) -> BotSeat {
        BotSeat {
            listing: BotListing {
                user: user(id, Role::Bot),
                offer,
            },
            rating,
            rated: true,
        }
    }

    fn ids(seekers: &[Seeker], made: &[(usize, usize)]) -> Vec<(String, String)> {
        made.iter()
            .map(|&(i, j)| (seekers[i].user.id.clone(), seekers[j].user.id.clone()))
            .collect()
    }

    #[test]
    fn the_window_starts_at_two_ranks_and_widens_by_one_every_ten_seconds_up_to_ten() {
        let s = Duration::from_secs;
        assert_eq!(window(s(0)), 200.0);
        assert_eq!(window(s(10) - Duration::from_millis(1)), 200.0);
        assert_eq!(window(s(10)), 300.0);
        assert_eq!(window(s(25)), 400.0);
        assert_eq!(window(s(80)), 1000.0);
        assert_eq!(window(s(3600)), 1000.0);
    }

    #[test]
    fn each_class_clock_is_of_its_class_and_the_bounds_are_inclusive() {
        for speed in [Speed::Blitz, Speed::Live, Speed::Long] {
            assert_eq!(Speed::of(&speed.clock()), speed);
        }
        let absolute = |main_ms| TimeControl::Absolute { main_ms };
        assert_eq!(Speed::of(&absolute(10 * MINUTE)), Speed::Blitz);
        assert_eq!(Speed::of(&absolute(10 * MINUTE + 1)), Speed::Live);
        assert_eq!(Speed::of(&absolute(60 * MINUTE)), Speed::Live);
        assert_eq!(Speed::of(&absolute(60 * MINUTE + 1)), Speed::Long);
        assert_eq!(Speed::of(&TimeControl::None), Speed::Long);
        let fischer = TimeControl::Fischer {
            main_ms: 5 * MINUTE,
            increment_ms: 10_000,
            max_ms: None,
        };
        assert_eq!(Speed::of(&fischer), Speed::Live, "5 min + 40 × 10 s");
        let canadian = TimeControl::Canadian {
            main_ms: 0,
            moves: 20,
            block_ms: 5 * MINUTE,
        };
        assert_eq!(Speed::of(&canadian), Speed::Blitz, "40 × 15 s");
        let simple = TimeControl::Simple {
            per_move_ms: 2 * MINUTE,
        };
        assert_eq!(Speed::of(&simple), Speed::Long, "40 × 2 min");
    }

    #[test]
    fn a_wish_names_a_size_and_a_speed_at_least() {
        assert!(Wish::new(vec![], vec![Speed::Live], false, false).is_err());
        assert!(Wish::new(vec![19], vec![], false, false).is_err());
        let err = Wish::new(vec![19, 7], vec![Speed::Live], false, false).unwrap_err();
        assert!(err.contains("not 7"), "{err}");
        let wish = Wish::new(
            vec![19, 9, 19],
            vec![Speed::Long, Speed::Blitz],
            true,
            false,
        )
        .unwrap();
        assert_eq!(wish.sizes, [9, 19]);
        assert_eq!(wish.speeds, [Speed::Blitz, Speed::Long]);
    }

    #[test]
    fn two_wishes_meet_on_the_largest_size_and_fastest_speed_they_share() {
        let a = Wish::new(
            vec![9, 13, 19],
            vec![Speed::Live, Speed::Long],
            false,
            false,
        )
        .unwrap();
        let b = Wish::new(
            vec![9, 13],
            vec![Speed::Blitz, Speed::Long, Speed::Live],
            false,
            true,
        )
        .unwrap();
        assert_eq!(a.meet(&b), Some((13, Speed::Live)));
        let rated = Wish::new(vec![9], vec![Speed::Live], true, false).unwrap();
        assert_eq!(a.meet(&rated), None, "rated meets rated only");
        let other = Wish::new(vec![9], vec![Speed::Blitz], false, false).unwrap();
        assert_eq!(a.meet(&other), None);
    }

    #[tokio::test(start_paused = true)]
    async fn the_closest_pair_goes_first_and_the_window_widens_with_the_longer_wait() {
        let t0 = Instant::now();
        let seekers = [
            seeker("ann", 1500.0, &[19], t0),
            seeker("bob", 1650.0, &[19], t0),
            seeker("cid", 1540.0, &[19], t0),
        ];
        assert_eq!(
            ids(&seekers, &pairs(&seekers, t0, &|_, _| false)),
            [("ann".into(), "cid".into())]
        );
        // Ann has blocked Cid: Cid goes to Bob, and Ann waits.
        let blocked = |a: &str, b: &str| [a, b] == ["ann", "cid"] || [a, b] == ["cid", "ann"];
        assert_eq!(
            ids(&seekers, &pairs(&seekers, t0, &blocked)),
            [("bob".into(), "cid".into())]
        );
        // 450 apart: paired once the longer waiter has waited 30 s.
        tokio::time::advance(Duration::from_secs(5)).await;
        let far = [
            seeker("ann", 1500.0, &[19], t0),
            seeker("dan", 1950.0, &[19], Instant::now()),
        ];
        let at = |secs| t0 + Duration::from_secs(secs);
        assert!(pairs(&far, at(29), &|_, _| false).is_empty());
        assert_eq!(pairs(&far, at(30), &|_, _| false), [(0, 1)]);
    }

    #[test]
    fn a_player_is_never_paired_with_themselves() {
        let t0 = Instant::now();
        let seekers = [
            seeker("ann", 1500.0, &[19], t0),
            seeker("ann", 1500.0, &[19], t0),
        ];
        assert!(pairs(&seekers, t0, &|_, _| false).is_empty());
    }

    #[test]
    fn stones_come_from_the_rank_difference_scaled_to_the_board() {
        let play = |a, b, size, handicap| terms(a, b, size, Speed::Live, true, handicap);
        let (even, _) = play(1500.0, 1560.0, 19, true);
        assert_eq!(
            (even.color, even.handicap, even.komi),
            (ColorChoice::Nigiri, 0, Some(HalfPoints(15))),
            "the terms are complete: Chinese komi 7.5"
        );
        assert_eq!(even.ko_rule, Some(KoRule::Situational));
        let (first, first_black) = play(1500.0, 1650.0, 19, true);
        assert_eq!(first.color, ColorChoice::Black);
        assert_eq!(
            (first.handicap, first.komi),
            (0, Some(HalfPoints(0))),
            "让先"
        );
        assert!(first_black, "the weaker takes Black");
        let (three, first_black) = play(1850.0, 1500.0, 19, true);
        assert_eq!(three.handicap, 3);
        assert!(!first_black);
        assert!(three.rated);
        // Nine ranks on 9x9 are two stones (9 × 81/361 = 2.02), on 13x13 four.
        assert_eq!(play(1500.0, 2400.0, 9, true).0.handicap, 2);
        assert_eq!(play(1500.0, 2400.0, 13, true).0.handicap, 4);
        assert_eq!(play(0.0, 3800.0, 19, true).0.handicap, 9, "at most nine");
        let (refused, _) = play(1500.0, 2400.0, 19, false);
        assert_eq!((refused.color, refused.handicap), (ColorChoice::Nigiri, 0));
    }

    #[test]
    fn the_closest_bot_that_admits_the_game_within_the_window_is_chosen() {
        let t0 = Instant::now();
        let nine = BotOffer {
            board_sizes: vec![9],
            ..BotOffer::default()
        };
        let bots = [
            bot("far", 1800.0, BotOffer::default()),
            bot("nine", 1510.0, nine),
            bot("near", 1550.0, BotOffer::default()),
        ];
        let ann = seeker("ann", 1500.0, &[13, 19], t0);
        let pairing = bot_for(&ann, &bots, t0).unwrap();
        assert_eq!(
            pairing.second.id, "near",
            "nine plays 9x9 only; far is out of reach"
        );
        assert_eq!(pairing.settings.board_size, 19);
        assert_eq!(pairing.settings.clock, Speed::Live.clock());
        let mut guest_bot = bot("guestbot", 1500.0, BotOffer::default());
        guest_bot.listing.user.role = Role::Guest;
        let mut rated = seeker("ann", 1500.0, &[19], t0);
        rated.wish.rated = true;
        assert!(bot_for(&rated, &[guest_bot], t0).is_none());
        let mut nameless = bot("nameless", 1500.0, BotOffer::default());
        nameless.rated = false;
        assert!(bot_for(&rated, std::slice::from_ref(&nameless), t0).is_none());
        let unrated = seeker("ann", 1500.0, &[19], t0);
        assert!(
            bot_for(&unrated, &[nameless], t0).is_some(),
            "a bot without an account plays unrated games"
        );
    }

    #[test]
    fn a_round_pairs_people_first_then_gives_bots_to_those_left() {
        let t0 = Instant::now();
        let queue = Queue::default();
        queue.put(seeker("ann", 1500.0, &[9, 19], t0));
        queue.put(seeker("bob", 1500.0, &[19], t0));
        queue.put(seeker("cid", 1500.0, &[13], t0));
        queue.put(seeker("dan", 1500.0, &[13], t0));
        queue.put(seeker("eve", 1500.0, &[9], t0));
        // Dan's second request replaces his first.
        queue.put(seeker("dan", 1500.0, &[9], t0));
        let bots = [bot("gnugo", 1500.0, BotOffer::default())];
        let made = queue.round(t0, &bots, |id| id != "eve", |_, _| false);
        let mut games: Vec<(String, String)> = made
            .iter()
            .map(|(p, _)| {
                let mut ids = [p.first.id.clone(), p.second.id.clone()];
                ids.sort();
                (ids[0].clone(), ids[1].clone())
            })
            .collect();
        games.sort();
        // Ann and Bob meet on 19; Cid and Dan no longer meet, so one of them gets the
        // only bot and the other waits; Eve has no free slot and waits too.
        assert_eq!(games.len(), 2, "{games:?}");
        assert_eq!(games[0], ("ann".into(), "bob".into()));
        assert!(games[1].1 == "gnugo" || games[1].0 == "gnugo", "{games:?}");
        assert!(queue.cancel("eve"), "Eve still waits");
        assert!(!queue.cancel("eve"));
    }
}
