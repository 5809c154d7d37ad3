//! The Glicko-2 update (Glickman, "Example of the Glicko-2 system", steps 1-8).
//!
//! Ratings are kept on the Glicko scale (`r`, `RD`) and converted to the Glicko-2 scale
//! (`μ`, `φ`) only inside an update, exactly as the paper does, so the paper's worked
//! example is reproduced by a test. Pure arithmetic: no clock, no I/O.

/// The Glicko-2 scale factor (step 2): `μ = (r - 1500) / SCALE`, `φ = RD / SCALE`.
pub const SCALE: f64 = 173.7178;

/// The system constant τ that bounds how fast the volatility changes (the paper suggests
/// 0.3 to 1.2; its example uses 0.5, and so do we).
pub const TAU: f64 = 0.5;

/// The convergence tolerance of the volatility iteration (step 5).
pub const EPSILON: f64 = 0.000_001;

/// The most volatile a rating can be. Step 5 lets one upset across thousands of rating
/// points raise σ without bound, and φ* and the rating change with it; capped, one game
/// moves μ by at most `(φ² + 0.1²)·g`: about 700 points for a new player, 20 for a settled
/// one. The paper's example (0.06 → 0.059996) never comes near it.
pub const MAX_VOLATILITY: f64 = 0.1;

/// The most uncertain a rating can be: a new player's deviation, and the cap on growth
/// while a player is away.
pub const MAX_DEVIATION: f64 = 350.0;

/// A player's rating on the Glicko scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    /// The rating `r`; 1500 for a new player.
    pub rating: f64,
    /// The rating deviation `RD`: one standard deviation of the estimate.
    pub deviation: f64,
    /// The volatility σ: how erratic the player's results have been.
    pub volatility: f64,
}

impl Rating {
    /// A new player: 1500, RD 350, volatility 0.06.
    pub const NEW: Rating = Rating {
        rating: 1500.0,
        deviation: MAX_DEVIATION,
        volatility: 0.06,
    };

    /// The rating after `periods` rating periods without a game: step 6 applied once per
    /// period (`φ² + periods·σ²`), so uncertainty grows with the player's own volatility,
    /// capped at [`MAX_DEVIATION`]. Fractional periods are allowed.
    pub fn after_idle(self, periods: f64) -> Rating {
        let phi = self.deviation / SCALE;
        let grown = (phi * phi + periods.max(0.0) * self.volatility * self.volatility).sqrt();
        Rating {
            deviation: (grown * SCALE).min(MAX_DEVIATION),
            ..self
        }
    }

    /// The same rating moved by `points`: how a handicap's worth enters the expected score.
    pub fn shifted(self, points: f64) -> Rating {
        Rating {
            rating: self.rating + points,
            ..self
        }
    }

    fn mu(&self) -> f64 {
        (self.rating - 1500.0) / SCALE
    }

    fn phi(&self) -> f64 {
        self.deviation / SCALE
    }
}

/// One game of a rating period, seen from the player being rated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Game {
    /// The opponent's rating before the period.
    pub opponent: Rating,
    /// The player's score: 1 for a win, 0.5 for a draw, 0 for a loss.
    pub score: f64,
}

/// The player's rating after one rating period with `games` (steps 1-8). A period without
/// games only grows the deviation (the paper's rule for a player who does not compete).
///
/// The new deviation is capped at [`MAX_DEVIATION`], as idle growth is: a game whose
/// result was all but certain (a large handicap misjudged) tells almost nothing, and
/// step 6 would otherwise leave the player less certain than a new one.
pub fn rate(player: Rating, games: &[Game]) -> Rating {
    if games.is_empty() {
        return player.after_idle(1.0);
    }
    let (mu, phi, sigma) = (player.mu(), player.phi(), player.volatility);
    let v = variance(mu, games);
    let sum = weighted_surprise(mu, games);
    let delta = v * sum;
    let sigma = new_volatility(phi, sigma, v, delta).min(MAX_VOLATILITY);
    let phi_star = (phi * phi + sigma * sigma).sqrt();
    let phi = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu = mu + phi * phi * sum;
    Rating {
        rating: SCALE * mu + 1500.0,
        deviation: (SCALE * phi).min(MAX_DEVIATION),
        volatility: sigma,
    }
}

/// One game as its own rating period, as the server rates every game.
pub fn rate_game(player: Rating, opponent: Rating, score: f64) -> Rating {
    rate(player, &[Game { opponent, score }])
}

/// g(φ): how much an opponent's uncertainty discounts what a game against them says.
fn g(phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * phi * phi / (std::f64::consts::PI * std::f64::consts::PI)).sqrt()
}

/// E(μ, μj, φj): the expected score against one opponent.
///
/// Kept a hair (`f64::EPSILON`) from 0 and 1, so that no game is certain in floating
/// point and v, Δ and step 5 stay finite whatever the ratings and handicap; any game the
/// paper's arithmetic can express is untouched.
fn expected(mu: f64, opponent: &Rating) -> f64 {
    let e = 1.0 / (1.0 + (-g(opponent.phi()) * (mu - opponent.mu())).exp());
    e.clamp(f64::EPSILON, 1.0 - f64::EPSILON)
}

/// Step 3: the estimated variance `v` of the rating from the game outcomes alone.
fn variance(mu: f64, games: &[Game]) -> f64 {
    let info: f64 = games
        .iter()
        .map(|game| {
            let (gj, e) = (g(game.opponent.phi()), expected(mu, &game.opponent));
            gj * gj * e * (1.0 - e)
        })
        .sum();
    1.0 / info
}

/// Σ g(φj)(sj − E): the step 4 sum, which also moves μ in step 7.
fn weighted_surprise(mu: f64, games: &[Game]) -> f64 {
    games
        .iter()
        .map(|game| g(game.opponent.phi()) * (game.score - expected(mu, &game.opponent)))
        .sum()
}

/// Step 5: the new volatility, the root of f found by the Illinois algorithm.
///
/// The iteration ends because f is decreasing, positive at the lower bracket and negative
/// (or zero) at the upper, and finite since [`expected`] keeps v and Δ finite.
fn new_volatility(phi: f64, sigma: f64, v: f64, delta: f64) -> f64 {
    let a = (sigma * sigma).ln();
    let f = |x: f64| {
        let ex = x.exp();
        let d = phi * phi + v + ex;
        ex * (delta * delta - phi * phi - v - ex) / (2.0 * d * d) - (x - a) / (TAU * TAU)
    };
    let mut big_a = a;
    let mut big_b = if delta * delta > phi * phi + v {
        (delta * delta - phi * phi - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * TAU) < 0.0 {
            k += 1.0;
        }
        a - k * TAU
    };
    let (mut f_a, mut f_b) = (f(big_a), f(big_b));
    while (big_b - big_a).abs() > EPSILON {
        let big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a);
        let f_c = f(big_c);
        if f_c * f_b <= 0.0 {
            big_a = big_b;
            f_a = f_b;
        } else {
            f_a /= 2.0;
        }
        big_b = big_c;
        f_b = f_c;
    }
    (big_a / 2.0).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds to `places` decimals, as the paper prints its numbers.
    fn printed(x: f64, places: i32) -> f64 {
        let k = 10f64.powi(places);
        (x * k).round() / k
    }

    fn paper_player() -> Rating {
        Rating {
            rating: 1500.0,
            deviation: 200.0,
            volatility: 0.06,
        }
    }

    fn paper_games() -> Vec<Game> {
        let opponent = |rating, deviation| Rating {
            rating,
            deviation,
            volatility: 0.06,
        };
        vec![
            Game {
                opponent: opponent(1400.0, 30.0),
                score: 1.0,
            },
            Game {
                opponent: opponent(1550.0, 100.0),
                score: 0.0,
            },
            Game {
                opponent: opponent(1700.0, 300.0),
                score: 0.0,
            },
        ]
    }

    /// The paper computes each step from the previous one as printed (g to 4 places, E
    /// to 3), so v and Δ differ from the unrounded ones in their 4th place; the step 5
    /// iteration then lands on σ' = 0.059996, which the paper prints as 0.05999.
    #[test]
    fn the_papers_intermediate_quantities_match_within_its_rounding() {
        let (player, games) = (paper_player(), paper_games());
        let (mu, phi) = (player.mu(), player.phi());
        assert_eq!(printed(phi, 4), 1.1513);
        let v = variance(mu, &games);
        assert!((v - 1.7785).abs() < 0.001, "v = {v}");
        let delta = v * weighted_surprise(mu, &games);
        assert!((delta + 0.4834).abs() < 0.001, "Δ = {delta}");
        let sigma = new_volatility(phi, 0.06, v, delta);
        assert!((sigma - 0.05999).abs() < 0.00001, "σ' = {sigma}");
        // The paper squares φ as printed, 1.1513, which moves φ* in the 6th place.
        let phi_star = (phi * phi + sigma * sigma).sqrt();
        assert!((phi_star - 1.152862).abs() < 0.00001, "φ* = {phi_star}");
    }

    #[test]
    fn the_papers_worked_example_gives_its_new_rating_deviation_and_volatility() {
        let after = rate(paper_player(), &paper_games());
        let mu = (after.rating - 1500.0) / SCALE;
        assert_eq!(printed(mu, 4), -0.2069);
        assert_eq!(printed(after.deviation / SCALE, 4), 0.8722);
        assert_eq!(printed(after.deviation, 2), 151.52);
        // The paper scales back the μ' it printed, -0.2069, to get 1464.06; the unrounded
        // μ' gives 1464.0507, within the last printed digit.
        assert_eq!(printed(SCALE * printed(mu, 4) + 1500.0, 2), 1464.06);
        assert!((after.rating - 1464.06).abs() < 0.01, "{after:?}");
        assert!((after.volatility - 0.05999).abs() < 0.00001, "{after:?}");
    }

    #[test]
    fn a_period_without_games_only_grows_the_deviation() {
        let player = paper_player();
        let after = rate(player, &[]);
        assert_eq!(after.rating, player.rating);
        assert_eq!(after.volatility, player.volatility);
        // Paper: φ' = sqrt(φ² + σ²).
        let expected = ((200.0 / SCALE).powi(2) + 0.06f64.powi(2)).sqrt() * SCALE;
        assert!((after.deviation - expected).abs() < 1e-9);
        assert!(after.deviation > player.deviation);
    }

    #[test]
    fn idle_growth_adds_one_step_six_per_period_and_stops_at_350() {
        let player = paper_player();
        let twice = rate(rate(player, &[]), &[]);
        assert!((player.after_idle(2.0).deviation - twice.deviation).abs() < 1e-9);
        assert_eq!(player.after_idle(0.0), player);
        assert_eq!(player.after_idle(1e9).deviation, MAX_DEVIATION);
        assert_eq!(Rating::NEW.after_idle(30.0), Rating::NEW);
    }

    #[test]
    fn a_win_raises_a_loss_lowers_and_a_draw_between_equals_keeps_the_rating() {
        let new = Rating::NEW;
        assert!(rate_game(new, new, 1.0).rating > 1500.0);
        assert!(rate_game(new, new, 0.0).rating < 1500.0);
        assert!((rate_game(new, new, 0.5).rating - 1500.0).abs() < 1e-9);
        assert!(rate_game(new, new, 1.0).deviation < MAX_DEVIATION);
    }

    #[test]
    fn an_upset_across_any_gap_moves_ratings_a_bounded_finite_amount() {
        let settled = |rating| Rating {
            rating,
            deviation: 60.0,
            volatility: 0.06,
        };
        let cases = [
            (settled(0.0), settled(3900.0), 22.0),
            (Rating::NEW, Rating::NEW.shifted(1e9), 700.0),
            (settled(-1e9), settled(1e9), 22.0),
        ];
        for (weak, strong, bound) in cases {
            for (player, opponent, score) in [(weak, strong, 1.0), (strong, weak, 0.0)] {
                let after = rate_game(player, opponent, score);
                let moved = (after.rating - player.rating).abs();
                assert!(moved > 0.0 && moved <= bound, "{player:?} -> {after:?}");
                assert!(after.deviation <= MAX_DEVIATION);
                assert!(after.volatility <= MAX_VOLATILITY);
            }
        }
    }

    #[test]
    fn beating_a_stronger_opponent_gains_more_than_beating_a_weaker_one() {
        let new = Rating::NEW;
        let strong = rate_game(new, new.shifted(300.0), 1.0);
        let weak = rate_game(new, new.shifted(-300.0), 1.0);
        assert!(strong.rating > weak.rating);
    }
}
