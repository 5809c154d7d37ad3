// What the profile and the leaderboard share: reading client-protocol/ratings.md's two
// routes, and the pools' names.

export const POOLS = [['overall', 'all boards'], ['9x9', '9×9'], ['13x13', '13×13'], ['19x19', '19×19']];

/** `GET url` as JSON; a refusal throws its `error` sentence, with the status. */
export async function getJson(url) {
  const res = await fetch(url, { cache: 'no-store' });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.error || `the server answered ${res.status}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

/** A rating as people read it: whole points. */
export function points(rating) {
  return String(Math.round(rating));
}
