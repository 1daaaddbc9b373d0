// AKK dashboard: the shell. It signs in with POST /v1/ui/session (an
// HttpOnly cookie; the token is never stored in the page), then calls the
// same REST routes as any host. Each view is a Preact component in a module
// of its own; actions come only from each row's available_actions.
import { html, render, api, ago, onUnauthorized } from "./lib.js";
import { connect, disconnect, onEvent } from "./events.js";
import { store, subscribe, refresh, stop, view, onOpenItem, notifying, subscribePush, hidingDetails } from "./store.js";
import { Queue, itemID } from "./queue.js";
import { Overview } from "./overview.js";
import { Agents } from "./agents.js";
import { Turn } from "./turn.js";
import { Hosts } from "./hosts.js";
import { Doctor } from "./doctor.js";
import { SignIn } from "./signin.js";

const $main = document.getElementById("main");
const $nav = document.getElementById("nav");
const $who = document.getElementById("who");
const $signout = document.getElementById("signout");
const $count = document.getElementById("needs-count");

let session = null;

async function loadSession() {
  try {
    session = await api("GET", "/v1/ui/session");
  } catch {
    session = null;
  }
  $nav.hidden = !session;
  $signout.hidden = !session;
  for (const el of $nav.querySelectorAll("[data-operator]")) el.hidden = !(session && session.role === "operator");
  $who.textContent = session ? (session.role === "operator" ? "operator" : `host ${session.host_name || session.host_id}`) : "";
  if (session) {
    connect();
    refresh(true);
    // Notifications on in this browser: its push subscription is this
    // session's (kept again; the daemon replaces one of the same endpoint).
    if (notifying()) subscribePush(hidingDetails());
  }
}

function signedOut() {
  session = null;
  disconnect();
  stop();
  $nav.hidden = true;
  $signout.hidden = true;
  $who.textContent = "";
  route();
}
onUnauthorized(signedOut);

$signout.addEventListener("click", async () => {
  try { await api("DELETE", "/v1/ui/session"); } catch { /* already gone */ }
  signedOut();
});

// Every event may change what a list shows: read it again (at most every 150 ms).
onEvent(() => refresh());

// The count of what waits, in the navigation and the tab title.
subscribe((s) => {
  const n = s.items.length;
  $count.textContent = n ? String(n) : "";
  $count.hidden = !n;
  document.title = n ? `(${n}) AKK` : "AKK";
});
onOpenItem((key) => { location.hash = `#/needs/${itemID(key)}`; });

// Each route bumps the generation; a route that waits never draws over a newer one.
let routeGen = 0;

async function route() {
  const gen = ++routeGen;
  if (!session) {
    view.name = "signin";
    render(html`<${SignIn} signedIn=${async () => { await loadSession(); location.hash = "#/"; route(); }} />`, $main);
    return;
  }
  let hash = location.hash || "#/";
  if (hash === "#/" || hash === "#") {
    // The default: the queue when anything waits, else the agents.
    if (!store.loaded) {
      await new Promise((res) => { const un = subscribe((s) => { if (s.loaded || s.error) { un(); res(); } }); refresh(true); });
      if (gen !== routeGen) return;
    }
    hash = store.items.length ? "#/needs" : "#/agents";
  }
  const base = hash.match(/^#\/[a-z]*/)[0];
  for (const a of $nav.querySelectorAll("a")) {
    const href = a.getAttribute("href");
    if (href === base || (base === "#/turn" && href === "#/agents") || (base === "#/conversation" && href === "#/overview")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  view.name = base.slice(2);
  let m;
  let v;
  if ((m = hash.match(/^#\/turn\/([A-Za-z0-9_]+)$/))) v = html`<${Turn} id=${m[1]} />`;
  else if ((m = hash.match(/^#\/needs(?:\/(item-[a-z0-9]+|turn_[A-Za-z0-9]+))?$/))) v = html`<${Queue} focus=${m[1]} />`;
  else if (hash === "#/overview") v = html`<${Overview} />`;
  else if ((m = hash.match(/^#\/conversation\/([A-Za-z0-9_.:-]+)$/))) v = html`<${Agents} only=${m[1]} />`;
  else if (hash === "#/hosts") v = html`<${Hosts} />`;
  else if (hash === "#/doctor") v = html`<${Doctor} />`;
  else { view.name = "agents"; v = html`<${Agents} />`; }
  // A view of its own per route (keyed), so nothing of the last one stays.
  render(html`<div key=${hash}>${v}</div>`, $main);
}

window.addEventListener("hashchange", route);
// Panes a person drives change without events: look again now and then.
setInterval(() => { if (session) refresh(); }, 10000);
// Relative times stay true.
setInterval(() => { for (const t of document.querySelectorAll("time[datetime]:not([data-since])")) t.textContent = ago(t.getAttribute("datetime")); }, 30000);

$main.replaceChildren();
await loadSession();
route();
// The shell is kept by a service worker, so the page opens from a phone's home screen.
if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => { /* not a secure context */ });
