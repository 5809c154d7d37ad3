//! Minimum-cost perfect matching on a general graph: the engine under every pairing.
//!
//! Pairing a round is choosing disjoint pairs of players so that the sum of the pairs'
//! costs is least. Players are not split into two sides, so this is matching on a general
//! graph, which needs Edmonds' blossoms. This is the primal-dual algorithm as Galil
//! describes it ("Efficient algorithms for finding maximum matching in graphs", ACM
//! Computing Surveys 18, 1986), in O(n³): each stage grows alternating trees from every
//! free vertex over tight edges, shrinks odd cycles into blossoms, and either augments or
//! changes the duals by the largest step that keeps them feasible. Costs are integers and
//! stay integers: weights are doubled, so every dual step is a whole number.
//!
//! Never allocates per edge inside a stage, never panics on any graph: a graph without a
//! perfect matching gives `None`.

/// Edges with a negative reduced cost that join the graph per vertex and check.
const PER_VERTEX: usize = 4;

/// No vertex, edge end or blossom.
const NONE: usize = usize::MAX;

/// A vertex or blossom's label in the current stage's alternating forest.
const FREE: u8 = 0;
/// An outer vertex: an even distance from a tree's root.
const OUTER: u8 = 1;
/// An inner vertex: an odd distance from a tree's root.
const INNER: u8 = 2;
/// A mark left by `scan_blossom` on the path it has walked.
const SEEN: u8 = 4;

/// The pairs of a least-cost perfect matching of vertices `0..n` over `edges`
/// (`(a, b, cost)`, at most one edge between two vertices, none from a vertex to itself),
/// as `mate[v]`; `None` when no perfect matching exists (an odd `n`, or too few edges).
///
/// Exact, and fast on the dense graphs pairing makes: it solves on each vertex's few
/// cheapest edges first, then checks every other edge against the solution's duals. An
/// edge whose reduced cost is negative could improve the matching, so the few most
/// negative at each vertex join and the smaller graph is solved again; when none is left,
/// LP duality says the matching is the cheapest on the whole graph.
pub fn min_cost_perfect(n: usize, edges: &[(usize, usize, i64)]) -> Option<Vec<usize>> {
    if n % 2 == 1 || edges.iter().any(|&(a, b, _)| a >= n || b >= n || a == b) {
        return None;
    }
    if n == 0 {
        return Some(Vec::new());
    }
    // Maximum weight among maximum-cardinality matchings, with weight = top - cost:
    // every perfect matching has n/2 edges, so the heaviest is the cheapest. Doubled, so
    // that every dual step is a whole number.
    let top = edges.iter().map(|e| e.2).max()? + 1;
    let weight = |k: usize| 2 * (top - edges[k].2);
    let mut incident = vec![Vec::new(); n];
    for (k, &(a, b, _)) in edges.iter().enumerate() {
        incident[a].push(k);
        incident[b].push(k);
    }
    for list in &mut incident {
        list.sort_unstable_by_key(|&k| edges[k].2);
    }
    let mut chosen = vec![false; edges.len()];
    // Edges to the next few vertices: callers number vertices so that near ones are
    // likely partners (pairing numbers them by score group), which makes a perfect
    // matching likely among the first edges tried.
    for (k, &(a, b, _)) in edges.iter().enumerate() {
        if a.abs_diff(b) <= 3 {
            chosen[k] = true;
        }
    }
    let mut cheapest = 8;
    loop {
        for list in &incident {
            for &k in list.iter().take(cheapest) {
                chosen[k] = true;
            }
        }
        loop {
            let sub: Vec<usize> = (0..edges.len()).filter(|&k| chosen[k]).collect();
            let weighted = sub
                .iter()
                .map(|&k| (edges[k].0, edges[k].1, weight(k)))
                .collect();
            let solved = Blossoms::new(n, weighted).solve();
            if solved.mate.contains(&NONE) {
                break;
            }
            let chains = solved.chains();
            // The most negative few per vertex join: enough to move the duals, few
            // enough to keep the next solve on a small graph.
            let mut worst: Vec<Vec<(i64, usize)>> = vec![Vec::new(); n];
            for k in 0..edges.len() {
                if chosen[k] {
                    continue;
                }
                let reduced = solved.reduced_cost(&chains, edges[k].0, edges[k].1, weight(k));
                if reduced < 0 {
                    for v in [edges[k].0, edges[k].1] {
                        worst[v].push((reduced, k));
                    }
                }
            }
            let mut improving = false;
            for list in &mut worst {
                list.sort_unstable();
                for &(_, k) in list.iter().take(PER_VERTEX) {
                    chosen[k] = true;
                    improving = true;
                }
            }
            if !improving {
                return Some(solved.mates());
            }
        }
        if cheapest >= n {
            return None;
        }
        cheapest *= 2;
    }
}

/// The state of one run: vertices `0..n`, blossoms `n..2n`.
struct Blossoms {
    n: usize,
    edges: Vec<(usize, usize, i64)>,
    /// `endpoint[p]` is the vertex at edge end `p`: edge `k` has ends `2k` and `2k + 1`.
    endpoint: Vec<usize>,
    /// The far ends of each vertex's edges.
    neighbours: Vec<Vec<usize>>,
    /// The edge end a vertex is matched through (its far end is the mate), or `NONE`.
    mate: Vec<usize>,
    label: Vec<u8>,
    /// The edge end through which a vertex or blossom got its label.
    label_end: Vec<usize>,
    /// The top-level blossom a vertex belongs to.
    in_blossom: Vec<usize>,
    parent: Vec<usize>,
    /// A blossom's sub-blossoms around its cycle, starting at the base.
    children: Vec<Vec<usize>>,
    /// The edge ends that join `children[i]` to `children[i + 1]` around the cycle.
    child_ends: Vec<Vec<usize>>,
    base: Vec<usize>,
    /// The least-slack edge from a free vertex or outer blossom to an outer one.
    best_edge: Vec<usize>,
    /// An outer blossom's least-slack edges to each other outer blossom, once computed.
    best_edges: Vec<Option<Vec<usize>>>,
    unused: Vec<usize>,
    dual: Vec<i64>,
    allowed: Vec<bool>,
    queue: Vec<usize>,
}

impl Blossoms {
    fn new(n: usize, edges: Vec<(usize, usize, i64)>) -> Blossoms {
        let top = edges.iter().map(|e| e.2).max().unwrap_or(0).max(0);
        let mut endpoint = Vec::with_capacity(2 * edges.len());
        let mut neighbours = vec![Vec::new(); n];
        for (k, &(a, b, _)) in edges.iter().enumerate() {
            endpoint.push(a);
            endpoint.push(b);
            neighbours[a].push(2 * k + 1);
            neighbours[b].push(2 * k);
        }
        let mut dual = vec![top; n];
        dual.resize(2 * n, 0);
        let mut base: Vec<usize> = (0..n).collect();
        base.resize(2 * n, NONE);
        Blossoms {
            n,
            allowed: vec![false; edges.len()],
            edges,
            endpoint,
            neighbours,
            mate: vec![NONE; n],
            label: vec![FREE; 2 * n],
            label_end: vec![NONE; 2 * n],
            in_blossom: (0..n).collect(),
            parent: vec![NONE; 2 * n],
            children: vec![Vec::new(); 2 * n],
            child_ends: vec![Vec::new(); 2 * n],
            base,
            best_edge: vec![NONE; 2 * n],
            best_edges: vec![None; 2 * n],
            unused: (n..2 * n).collect(),
            dual,
            queue: Vec::new(),
        }
    }

    fn slack(&self, k: usize) -> i64 {
        let (a, b, w) = self.edges[k];
        self.dual[a] + self.dual[b] - 2 * w
    }

    /// The vertices inside blossom `b`, depth first.
    fn leaves(&self, b: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![b];
        while let Some(t) = stack.pop() {
            if t < self.n {
                out.push(t);
            } else {
                stack.extend(self.children[t].iter().rev());
            }
        }
        out
    }

    /// Labels `w` and its top blossom, reached through edge end `p`; an inner blossom's
    /// mate becomes outer in turn.
    fn assign_label(&mut self, mut w: usize, mut label: u8, mut p: usize) {
        loop {
            let b = self.in_blossom[w];
            self.label[w] = label;
            self.label[b] = label;
            self.label_end[w] = p;
            self.label_end[b] = p;
            self.best_edge[w] = NONE;
            self.best_edge[b] = NONE;
            if label == OUTER {
                let leaves = self.leaves(b);
                self.queue.extend(leaves);
                return;
            }
            let mate = self.mate[self.base[b]];
            w = self.endpoint[mate];
            label = OUTER;
            p = mate ^ 1;
        }
    }

    /// Walks up the trees from outer vertices `v` and `w`: the base of a new blossom if
    /// the two meet, `NONE` if they reach different roots (an augmenting path).
    fn scan_blossom(&mut self, mut v: usize, mut w: usize) -> usize {
        let mut path = Vec::new();
        let mut base = NONE;
        while v != NONE {
            let b = self.in_blossom[v];
            if self.label[b] & SEEN != 0 {
                base = self.base[b];
                break;
            }
            path.push(b);
            self.label[b] = OUTER | SEEN;
            v = match self.label_end[b] {
                NONE => NONE,
                end => {
                    let inner = self.in_blossom[self.endpoint[end]];
                    self.endpoint[self.label_end[inner]]
                }
            };
            if w != NONE {
                std::mem::swap(&mut v, &mut w);
            }
        }
        for b in path {
            self.label[b] = OUTER;
        }
        base
    }

    /// Shrinks the odd cycle closed by edge `k` through `base` into a new outer blossom.
    fn add_blossom(&mut self, base: usize, k: usize) {
        let (mut v, mut w, _) = self.edges[k];
        let bb = self.in_blossom[base];
        let mut bv = self.in_blossom[v];
        let mut bw = self.in_blossom[w];
        let Some(b) = self.unused.pop() else {
            return; // at most n/2 blossoms nest at once: never reached
        };
        self.base[b] = base;
        self.parent[b] = NONE;
        self.parent[bb] = b;
        let mut path = Vec::new();
        let mut ends = Vec::new();
        while bv != bb {
            self.parent[bv] = b;
            path.push(bv);
            ends.push(self.label_end[bv]);
            v = self.endpoint[self.label_end[bv]];
            bv = self.in_blossom[v];
        }
        path.push(bb);
        path.reverse();
        ends.reverse();
        ends.push(2 * k);
        while bw != bb {
            self.parent[bw] = b;
            path.push(bw);
            ends.push(self.label_end[bw] ^ 1);
            w = self.endpoint[self.label_end[bw]];
            bw = self.in_blossom[w];
        }
        self.children[b] = path;
        self.child_ends[b] = ends;
        self.label[b] = OUTER;
        self.label_end[b] = self.label_end[bb];
        self.dual[b] = 0;
        for v in self.leaves(b) {
            if self.label[self.in_blossom[v]] == INNER {
                self.queue.push(v);
            }
            self.in_blossom[v] = b;
        }
        // The new blossom's least-slack edge to each other outer blossom.
        let mut best_to = vec![NONE; 2 * self.n];
        for i in 0..self.children[b].len() {
            let child = self.children[b][i];
            let candidates: Vec<usize> = match self.best_edges[child].take() {
                Some(list) => list,
                None => self
                    .leaves(child)
                    .into_iter()
                    .flat_map(|v| self.neighbours[v].iter().map(|p| p / 2))
                    .collect(),
            };
            for k in candidates {
                let (i, j, _) = self.edges[k];
                let j = if self.in_blossom[j] == b { i } else { j };
                let bj = self.in_blossom[j];
                if bj != b
                    && self.label[bj] == OUTER
                    && (best_to[bj] == NONE || self.slack(k) < self.slack(best_to[bj]))
                {
                    best_to[bj] = k;
                }
            }
            self.best_edge[child] = NONE;
        }
        let list: Vec<usize> = best_to.into_iter().filter(|&k| k != NONE).collect();
        self.best_edge[b] = list
            .iter()
            .copied()
            .min_by_key(|&k| self.slack(k))
            .unwrap_or(NONE);
        self.best_edges[b] = Some(list);
    }

    /// Undoes blossom `b`: at a stage's end (its dual is zero), or mid-stage when an inner
    /// blossom's dual reaches zero, relabelling the children along its tree path.
    fn expand_blossom(&mut self, b: usize, end_of_stage: bool) {
        let children = std::mem::take(&mut self.children[b]);
        let ends = std::mem::take(&mut self.child_ends[b]);
        for &s in &children {
            self.parent[s] = NONE;
            if s < self.n {
                self.in_blossom[s] = s;
            } else if end_of_stage && self.dual[s] == 0 {
                self.expand_blossom(s, end_of_stage);
            } else {
                for v in self.leaves(s) {
                    self.in_blossom[v] = s;
                }
            }
        }
        if !end_of_stage && self.label[b] == INNER {
            let len = children.len() as isize;
            let at = |j: isize| j.rem_euclid(len) as usize;
            let entry = self.in_blossom[self.endpoint[self.label_end[b] ^ 1]];
            let mut j = children.iter().position(|&c| c == entry).unwrap_or(0) as isize;
            let (step, trick): (isize, usize) = if j & 1 == 1 {
                j -= len;
                (1, 0)
            } else {
                (-1, 1)
            };
            let mut p = self.label_end[b];
            while j != 0 {
                self.label[self.endpoint[p ^ 1]] = FREE;
                self.label[self.endpoint[ends[at(j - trick as isize)] ^ trick ^ 1]] = FREE;
                self.assign_label(self.endpoint[p ^ 1], INNER, p);
                self.allowed[ends[at(j - trick as isize)] / 2] = true;
                j += step;
                p = ends[at(j - trick as isize)] ^ trick;
                self.allowed[p / 2] = true;
                j += step;
            }
            let bv = children[at(j)];
            self.label[self.endpoint[p ^ 1]] = INNER;
            self.label[bv] = INNER;
            self.label_end[self.endpoint[p ^ 1]] = p;
            self.label_end[bv] = p;
            self.best_edge[bv] = NONE;
            j += step;
            while children[at(j)] != entry {
                let bv = children[at(j)];
                j += step;
                if self.label[bv] == OUTER {
                    continue;
                }
                if let Some(v) = self.leaves(bv).into_iter().find(|&v| self.label[v] != FREE) {
                    self.label[v] = FREE;
                    self.label[self.endpoint[self.mate[self.base[bv]]]] = FREE;
                    self.assign_label(v, INNER, self.label_end[v]);
                }
            }
        }
        self.label[b] = FREE;
        self.label_end[b] = NONE;
        self.base[b] = NONE;
        self.best_edges[b] = None;
        self.best_edge[b] = NONE;
        self.unused.push(b);
    }

    /// Swaps matched and unmatched edges along the even path from `v` to the base of `b`,
    /// and makes `v` the new base.
    fn augment_blossom(&mut self, b: usize, v: usize) {
        let mut t = v;
        while self.parent[t] != b {
            t = self.parent[t];
        }
        if t >= self.n {
            self.augment_blossom(t, v);
        }
        let len = self.children[b].len() as isize;
        let at = |j: isize| j.rem_euclid(len) as usize;
        let i = self.children[b].iter().position(|&c| c == t).unwrap_or(0);
        let mut j = i as isize;
        let (step, trick): (isize, usize) = if i & 1 == 1 {
            j -= len;
            (1, 0)
        } else {
            (-1, 1)
        };
        while j != 0 {
            j += step;
            let t = self.children[b][at(j)];
            let p = self.child_ends[b][at(j - trick as isize)] ^ trick;
            if t >= self.n {
                self.augment_blossom(t, self.endpoint[p]);
            }
            j += step;
            let t = self.children[b][at(j)];
            if t >= self.n {
                self.augment_blossom(t, self.endpoint[p ^ 1]);
            }
            self.mate[self.endpoint[p]] = p ^ 1;
            self.mate[self.endpoint[p ^ 1]] = p;
        }
        self.children[b].rotate_left(i);
        self.child_ends[b].rotate_left(i);
        self.base[b] = self.base[self.children[b][0]];
    }

    /// Augments along the path through edge `k` between two trees' outer vertices.
    fn augment_matching(&mut self, k: usize) {
        let (v, w, _) = self.edges[k];
        for (mut s, mut p) in [(v, 2 * k + 1), (w, 2 * k)] {
            loop {
                let bs = self.in_blossom[s];
                if bs >= self.n {
                    self.augment_blossom(bs, s);
                }
                self.mate[s] = p;
                if self.label_end[bs] == NONE {
                    break;
                }
                let t = self.endpoint[self.label_end[bs]];
                let bt = self.in_blossom[t];
                s = self.endpoint[self.label_end[bt]];
                let j = self.endpoint[self.label_end[bt] ^ 1];
                if bt >= self.n {
                    self.augment_blossom(bt, j);
                }
                self.mate[j] = self.label_end[bt];
                p = self.label_end[bt] ^ 1;
            }
        }
    }

    /// Grows the forest from the queue's outer vertices; true once it has augmented.
    fn grow(&mut self) -> bool {
        while let Some(v) = self.queue.pop() {
            for i in 0..self.neighbours[v].len() {
                let p = self.neighbours[v][i];
                let k = p / 2;
                let w = self.endpoint[p];
                if self.in_blossom[v] == self.in_blossom[w] {
                    continue;
                }
                let mut slack = 0;
                if !self.allowed[k] {
                    slack = self.slack(k);
                    if slack <= 0 {
                        self.allowed[k] = true;
                    }
                }
                let bw = self.in_blossom[w];
                if self.allowed[k] {
                    if self.label[bw] == FREE {
                        self.assign_label(w, INNER, p ^ 1);
                    } else if self.label[bw] == OUTER {
                        let base = self.scan_blossom(v, w);
                        if base != NONE {
                            self.add_blossom(base, k);
                        } else {
                            self.augment_matching(k);
                            return true;
                        }
                    } else if self.label[w] == FREE {
                        self.label[w] = INNER;
                        self.label_end[w] = p ^ 1;
                    }
                } else if self.label[bw] == OUTER {
                    let b = self.in_blossom[v];
                    if self.best_edge[b] == NONE || slack < self.slack(self.best_edge[b]) {
                        self.best_edge[b] = k;
                    }
                } else if self.label[w] == FREE
                    && (self.best_edge[w] == NONE || slack < self.slack(self.best_edge[w]))
                {
                    self.best_edge[w] = k;
                }
            }
        }
        false
    }

    /// The dual step that keeps every dual feasible, applied; false when no step can
    /// lead to an augmentation (the matching has maximum cardinality).
    fn change_duals(&mut self) -> bool {
        enum Step {
            Edge(usize),
            Blossom(usize),
        }
        let n = self.n;
        let mut best: Option<(i64, Step)> = None;
        let consider = |d: i64, step: Step, best: &mut Option<(i64, Step)>| {
            if best.as_ref().is_none_or(|(delta, _)| d < *delta) {
                *best = Some((d, step));
            }
        };
        for v in 0..n {
            if self.label[self.in_blossom[v]] == FREE && self.best_edge[v] != NONE {
                consider(
                    self.slack(self.best_edge[v]),
                    Step::Edge(self.best_edge[v]),
                    &mut best,
                );
            }
        }
        for b in 0..2 * n {
            if self.parent[b] == NONE && self.label[b] == OUTER && self.best_edge[b] != NONE {
                let k = self.best_edge[b];
                consider(self.slack(k) / 2, Step::Edge(k), &mut best);
            }
        }
        for b in n..2 * n {
            if self.base[b] != NONE && self.parent[b] == NONE && self.label[b] == INNER {
                consider(self.dual[b], Step::Blossom(b), &mut best);
            }
        }
        let Some((delta, step)) = best else {
            return false;
        };
        for v in 0..n {
            match self.label[self.in_blossom[v]] {
                OUTER => self.dual[v] -= delta,
                INNER => self.dual[v] += delta,
                _ => {}
            }
        }
        for b in n..2 * n {
            if self.base[b] != NONE && self.parent[b] == NONE {
                match self.label[b] {
                    OUTER => self.dual[b] += delta,
                    INNER => self.dual[b] -= delta,
                    _ => {}
                }
            }
        }
        match step {
            Step::Edge(k) => {
                self.allowed[k] = true;
                let (i, j, _) = self.edges[k];
                let outer = if self.label[self.in_blossom[i]] == OUTER {
                    i
                } else {
                    j
                };
                self.queue.push(outer);
            }
            Step::Blossom(b) => self.expand_blossom(b, false),
        }
        true
    }

    /// Stages until none augments.
    fn solve(mut self) -> Blossoms {
        for _ in 0..self.n {
            self.label.fill(FREE);
            self.best_edge.fill(NONE);
            for list in &mut self.best_edges[self.n..] {
                *list = None;
            }
            self.allowed.fill(false);
            self.queue.clear();
            for v in 0..self.n {
                if self.mate[v] == NONE && self.label[self.in_blossom[v]] == FREE {
                    self.assign_label(v, OUTER, NONE);
                }
            }
            let augmented = loop {
                if self.grow() {
                    break true;
                }
                if !self.change_duals() {
                    break false;
                }
            };
            if !augmented {
                break;
            }
            for b in self.n..2 * self.n {
                if self.parent[b] == NONE
                    && self.base[b] != NONE
                    && self.label[b] == OUTER
                    && self.dual[b] == 0
                {
                    self.expand_blossom(b, true);
                }
            }
        }
        self
    }

    /// Each vertex's mate, `NONE` where unmatched.
    fn mates(&self) -> Vec<usize> {
        self.mate
            .iter()
            .map(|&p| if p == NONE { NONE } else { self.endpoint[p] })
            .collect()
    }

    /// Each vertex's blossoms, innermost first, for [`Blossoms::reduced_cost`].
    fn chains(&self) -> Vec<Vec<usize>> {
        (0..self.n)
            .map(|mut v| {
                let mut up = Vec::new();
                while self.parent[v] != NONE {
                    v = self.parent[v];
                    up.push(v);
                }
                up
            })
            .collect()
    }

    /// Edge `(a, b)` of doubled weight `w` against the duals of a solved graph: the
    /// vertices' duals plus those of the blossoms holding both, less the weight.
    fn reduced_cost(&self, chains: &[Vec<usize>], a: usize, b: usize, w: i64) -> i64 {
        let shared: i64 = chains[a]
            .iter()
            .rev()
            .zip(chains[b].iter().rev())
            .take_while(|(x, y)| x == y)
            .map(|(x, _)| self.dual[*x])
            .sum();
        self.dual[a] + self.dual[b] - 2 * w + 2 * shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The least total cost over every perfect matching, by trying them all.
    fn exhaustive(n: usize, cost: &[Vec<Option<i64>>]) -> Option<i64> {
        fn go(free: &mut [usize], cost: &[Vec<Option<i64>>]) -> Option<i64> {
            let Some(&a) = free.first() else {
                return Some(0);
            };
            let mut best = None;
            for i in 1..free.len() {
                let b = free[i];
                let Some(c) = cost[a][b] else { continue };
                let mut rest: Vec<usize> =
                    free.iter().copied().filter(|&v| v != a && v != b).collect();
                if let Some(r) = go(&mut rest, cost) {
                    best = Some(best.map_or(c + r, |x: i64| x.min(c + r)));
                }
            }
            best
        }
        go(&mut (0..n).collect::<Vec<_>>(), cost)
    }

    fn total(mate: &[usize], cost: &[Vec<Option<i64>>]) -> i64 {
        (0..mate.len())
            .filter(|&v| v < mate[v])
            .map(|v| cost[v][mate[v]].unwrap())
            .sum()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn the_matching_is_perfect_and_as_cheap_as_exhaustive_search(
            half in 1usize..=6,
            seed in proptest::collection::vec((0i64..6, 0u8..10), 66),
        ) {
            let n = 2 * half;
            let mut cost = vec![vec![None; n]; n];
            let mut edges = Vec::new();
            let mut s = seed.iter();
            for (a, b) in (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))) {
                let &(c, present) = s.next().unwrap();
                if present < 8 {
                    cost[a][b] = Some(c);
                    cost[b][a] = Some(c);
                    edges.push((a, b, c));
                }
            }
            let expected = exhaustive(n, &cost);
            let got = min_cost_perfect(n, &edges);
            prop_assert_eq!(got.is_some(), expected.is_some());
            if let (Some(mate), Some(expected)) = (got, expected) {
                for v in 0..n {
                    prop_assert_eq!(mate[mate[v]], v);
                    prop_assert!(cost[v][mate[v]].is_some());
                }
                prop_assert_eq!(total(&mate, &cost), expected);
            }
        }
    }

    #[test]
    fn odd_fields_and_missing_edges_have_no_perfect_matching() {
        assert_eq!(min_cost_perfect(3, &[(0, 1, 1), (1, 2, 1)]), None);
        assert_eq!(
            min_cost_perfect(4, &[(0, 1, 1), (0, 2, 1), (0, 3, 1)]),
            None
        );
        assert_eq!(min_cost_perfect(0, &[]), Some(vec![]));
    }
}
