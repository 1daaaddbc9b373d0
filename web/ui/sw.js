// The dashboard's service worker: it keeps the page's shell (its HTML,
// CSS, scripts and icons) so the page opens at once from a home screen, and
// never touches an API answer: /v1/, /mcp and every non-GET request go to
// the network as if there were no worker. The shell is asked for from the
// network first; the cached copy serves only when the daemon cannot be
// reached.
const CACHE = "akk-shell-3";
const SHELL = ["/", "/ui/app.css", "/ui/app.js", "/ui/lib.js", "/ui/store.js", "/ui/events.js", "/ui/parts.js",
  "/ui/queue.js", "/ui/overview.js", "/ui/agents.js", "/ui/turn.js", "/ui/hosts.js", "/ui/doctor.js", "/ui/signin.js",
  "/ui/vendor/preact/preact.mjs", "/ui/vendor/preact/hooks.mjs", "/ui/vendor/htm/htm.mjs",
  "/ui/manifest.webmanifest", "/ui/icon.svg"];

self.addEventListener("install", (ev) => {
  ev.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (ev) => {
  ev.waitUntil(caches.keys().then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

function isShell(url) {
  return url.origin === self.location.origin && (url.pathname === "/" || SHELL.includes(url.pathname));
}

self.addEventListener("fetch", (ev) => {
  const req = ev.request;
  const url = new URL(req.url);
  if (req.method !== "GET" || !isShell(url)) return; // the API: no worker at all
  ev.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const res = await fetch(req);
      if (res.ok) await cache.put(url.pathname, res.clone());
      return res;
    } catch (e) {
      const hit = await cache.match(url.pathname);
      if (hit) return hit;
      throw e;
    }
  })());
});

// Web Push: AKK sends one push for each new item that waits for a person
// (its title names the agent and what it asks; its body the project and,
// unless the person chose to hide details, the command or question). Shown
// even with no tab open; one notification per item (its tag), and a click
// opens the queue on it. A permission prompt AKK can answer comes with its
// one-tap actions (Approve once, Reject): each button posts its own
// single-use token, which AKK fences like any approval (the prompt must
// still be the one the push showed, or nothing is typed).
self.addEventListener("push", (ev) => {
  let p = {};
  try { p = ev.data ? ev.data.json() : {}; } catch { p = { title: ev.data ? ev.data.text() : "" }; }
  const actions = Array.isArray(p.actions) ? p.actions.filter((a) => a && a.action && a.token) : [];
  const tokens = Object.fromEntries(actions.map((a) => [a.action, a.token]));
  ev.waitUntil(self.registration.showNotification(p.title || "An agent needs you", {
    body: p.body || "", tag: p.tag || undefined, icon: "/ui/icon.svg", badge: "/ui/icon.svg",
    actions: actions.map((a) => ({ action: a.action, title: a.title })),
    data: { url: p.url || "/#/needs", turn_id: p.turn_id || "", tokens },
  }));
});

// act posts a one-tap action's token and says what came of it in the
// notification's place.
async function act(n, action) {
  const token = n.data && n.data.tokens && n.data.tokens[action];
  let text;
  try {
    const r = await fetch(`/v1/actions/${token}`, { method: "POST", credentials: "omit" });
    const v = await r.json().catch(() => ({}));
    if (r.ok && v.outcome === "done") text = action === "reject" ? "Rejected." : "Approved once.";
    else if (r.ok) text = `Not proven (${v.outcome}): look at the pane before anything else.`;
    else text = `Not answered: ${v.detail || v.title || r.status}`;
  } catch (e) {
    text = "Not answered: AKK could not be reached.";
  }
  await self.registration.showNotification(n.title, { body: text, tag: n.tag || undefined, data: { url: n.data.url } });
}

self.addEventListener("notificationclick", (ev) => {
  ev.notification.close();
  ev.waitUntil(notificationClicked(ev.notification, ev.action));
});

// notificationClicked is what a click on a notification does: a one-tap
// button posts its token; the notification itself opens the queue on its
// item (in a window of the dashboard when one is open).
async function notificationClicked(n, action) {
  if (action && n.data && n.data.tokens && n.data.tokens[action]) return act(n, action);
  const url = new URL((n.data && n.data.url) || "/#/needs", self.location.origin).href;
  const wins = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const w of wins) {
    if (new URL(w.url).origin === self.location.origin) {
      await w.focus();
      return w.navigate(url);
    }
  }
  return self.clients.openWindow(url);
}
