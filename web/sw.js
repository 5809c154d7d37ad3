// The web client's service worker (client-protocol/notifications.md#web-push): shows the
// Web Push notifications the server sends, each a notice in a line, and on a click brings
// a tab of this server to the notice's page (the game, the tournament, the lobby), or
// opens one. Served from the root so that its scope is the whole client.

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

/** A page of this server: `url` when it is one, else the client's start. */
function ownPage(url) {
  const start = new URL('/#/', self.registration.scope);
  try {
    const page = new URL(url, self.registration.scope);
    return page.origin === start.origin ? page.href : start.href;
  } catch {
    return start.href;
  }
}

self.addEventListener('push', (event) => {
  let msg = {};
  try {
    msg = event.data ? event.data.json() : {};
  } catch {
    msg = { body: event.data ? event.data.text() : '' };
  }
  event.waitUntil(self.registration.showNotification(msg.title || 'Go server', {
    body: msg.body || '',
    icon: '/favicon.svg',
    tag: msg.notice_id ? `notice-${msg.notice_id}` : undefined,
    data: { url: ownPage(msg.url || '/#/') },
  }));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const target = ownPage(event.notification.data?.url || '/#/');
  event.waitUntil((async () => {
    const tabs = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const tab = tabs.find((c) => new URL(c.url).origin === self.location.origin);
    if (tab) {
      try {
        await tab.focus();
        await tab.navigate(target);
        return;
      } catch {
        // A tab this worker does not control cannot be steered: open the page instead.
      }
    }
    await self.clients.openWindow(target);
  })());
});
