// The dashboard's browser test: playwright-core drives Debian's headless
// Chromium against a real akkd with real agent panes (started by
// TestE2EDashboard in cmd/akkd, which passes everything in the
// environment). Each step waits for what the page shows, never for time.
import { createRequire } from "node:module";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(path.join(process.env.AKK_NODE_MODULES, "x.js"));
const { chromium } = require("playwright-core");
const axePath = require.resolve("axe-core/axe.min.js");

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const URL = env("AKK_URL");
const OP = env("AKK_OPERATOR_TOKEN");
const HOST_B = env("AKK_HOST_B_TOKEN");
const CLAUDE = env("AKK_CLAUDE_PROJECT");
const CODEX = env("AKK_CODEX_PROJECT");
const BACKEND = env("AKK_BACKEND_PROJECT");
const MERGED = env("AKK_MERGED_PROJECT");
const CLAUDE2 = env("AKK_CLAUDE2_PROJECT");
const DIALOG = env("AKK_DIALOG_PROJECT");
const RECEIVER = env("AKK_RECEIVER_URL");
const PUSHES = env("AKK_PUSHES_URL"); // what AKK pushed to the operator's phone, decrypted
const OUT = env("AKK_ARTIFACTS");
const T = 90_000; // the longest any step may take on a busy machine

fs.mkdirSync(OUT, { recursive: true });
const log = (...a) => console.log("dashboard:", ...a);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

let failed = false;

const pages = [];

async function newPage(opts) {
  // bypassCSP only so the test can inject axe-core; the page itself runs under its CSP.
  const ctx = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, ...(opts || {}) });
  // Notifications the page raises are recorded (the browser shows none
  // headless); a test clicks one by dispatching its click.
  await ctx.addInitScript(() => {
    window.__notes = [];
    // A trail of what happened to the send forms (printed when the test
    // fails): a form taken out of the page, a submit, a submit the
    // browser refused (an empty required field).
    window.__trail = [];
    const t0 = performance.now();
    const note = (what, el) => {
      const card = el && el.closest && el.closest("article.card");
      window.__trail.push(`${(performance.now() - t0).toFixed(0)} ms ${what} ${card ? card.dataset.conversation : ""}`);
    };
    document.addEventListener("submit", (e) => note(`submit (${(e.target.querySelector("textarea") || {}).value?.length ?? "-"} chars)`, e.target), true);
    document.addEventListener("invalid", (e) => note(`invalid ${e.target.name}`, e.target), true);
    document.addEventListener("input", (e) => { if (e.target.name === "request") note(`input (${e.target.value.length} chars)`, e.target); }, true);
    new MutationObserver((ms) => {
      for (const m of ms) for (const n of m.removedNodes) {
        if (n.nodeType !== 1) continue;
        const forms = n.matches("textarea[name=request]") ? [n] : [...n.querySelectorAll("textarea[name=request]")];
        for (const f of forms) note(`removed a send form (${f.value.length} chars) from ${m.target.nodeName}.${m.target.className}`, n.closest ? (n.closest("article.card") || m.target) : m.target);
      }
    }).observe(document, { childList: true, subtree: true });
    if (!window.Notification) return;
    const N = window.Notification;
    window.Notification = class extends N {
      constructor(title, opts) {
        super(title, opts);
        window.__notes.push({ title, body: opts && opts.body, n: this });
      }
    };
  });
  const page = await ctx.newPage();
  pages.push(page);
  page.on("pageerror", (e) => { console.error("dashboard: page error:", e.message); failed = true; });
  return page;
}

// shot saves what the page draws, for a person to look at; no check rests
// on it. A browser that draws no frame in time (headless Chromium on a
// starved machine, once, its page's script still answering) costs the
// picture, not the run: the checks go on, and a page that stays undrawn
// fails the next click, which waits for a frame.
async function shot(page, name) {
  try {
    await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true, timeout: 15_000 });
  } catch (e) {
    if (e?.name !== "TimeoutError") throw e;
    console.error(`dashboard: no screenshot of ${name}: the browser drew no frame in 15 s; the checks go on`);
  }
}

async function axe(page, name) {
  await page.addScriptTag({ path: axePath });
  const res = await page.evaluate(async () => await window.axe.run(document, { resultTypes: ["violations"] }));
  const bad = res.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  if (bad.length) {
    throw new Error(`axe on ${name}: ${bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`).join("; ")}`);
  }
  log(`axe ${name}: no serious or critical violation (${res.violations.length} minor)`);
}

async function narrow(page, name) {
  const size = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  const over = await page.evaluate(() => document.documentElement.scrollWidth);
  await shot(page, `${name}-390px`);
  await page.setViewportSize(size);
  if (over > 390) throw new Error(`${name} is ${over} px wide at a 390 px viewport`);
}

async function check(page, name) {
  await shot(page, name);
  await axe(page, name);
  await narrow(page, name);
}

// checkDark also checks the view in the dark scheme (contrast included).
async function checkDark(page, name) {
  await check(page, name);
  await page.emulateMedia({ colorScheme: "dark" });
  try {
    await shot(page, `${name}-dark`);
    await axe(page, `${name}-dark`);
  } finally {
    await page.emulateMedia({ colorScheme: "light" });
  }
}

async function signIn(page, token) {
  await page.goto(URL + "/");
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  // The default view: the queue when anything waits, else the agents.
  await page.getByRole("heading", { name: /^(Agents|Needs you)$/ }).waitFor({ timeout: T });
  await page.getByRole("link", { name: "Agents", exact: true }).click();
  await page.getByRole("heading", { name: "Agents" }).waitFor({ timeout: T });
}

// A pane's card; a backend conversation's (a Codex thread with no pane).
const card = (page, project) => page.locator('article.card[data-transport="terminal"]', { hasText: project });
const backendCard = (page, project) => page.locator('article.card[data-transport="codex_backend"]', { hasText: project });

async function cardState(page, project, state) {
  await card(page, project).and(page.locator(`[data-state="${state}"]`)).waitFor({ timeout: T });
}

async function send(page, project, text, c = card(page, project)) {
  // A rejected prompt leaves its Turn waiting for words: close it from its
  // card when it still holds the pane.
  // (A form not offered now is kept hidden, with what was typed in it.)
  const box = c.getByLabel("Send a task", { exact: true }).filter({ visible: true });
  const close = c.getByRole("button", { name: "Close" });
  // The Turn may also end by itself (the card redraws and its Close goes):
  // look again until the form is there.
  const deadline = Date.now() + T;
  while (!(await box.count())) {
    if (Date.now() > deadline) throw new Error("the card never offered a send");
    await box.or(close).first().waitFor({ timeout: T });
    if (!(await box.count()) && (await close.count())) {
      if (await close.first().click({ timeout: 2000 }).then(() => true, () => false)) log("closed a Turn from its card");
    }
  }
  const before = await c.getByRole("link", { name: /^turn_/ }).allInnerTexts();
  const mark = await c.page().evaluate(() => window.__trail.length);
  await box.fill(text);
  await c.getByRole("button", { name: "Send" }).click();
  // Sent: the card says so, or (re-rendered by the Turn's first events)
  // links a Turn it did not link before.
  const fresh = c.getByRole("link", { name: /^turn_/ }).filter({ hasNotText: new RegExp(before.join("|") || "^$") });
  await c.getByText(/^Sent \(/).or(fresh).first().waitFor({ timeout: T });
  // A form holding the task taken out of the page while it was sent (its
  // draft kept it): said, to know how often it happens.
  const rebuilt = (await c.page().evaluate((m) => window.__trail.slice(m), mark)).filter((l) => /removed a send form \([1-9]/.test(l));
  for (const l of rebuilt) log(`a send form was built again while a task was sent: ${l}`);
}

// A Turn that ended shows its final message on the card.
async function finalMessage(page, project, pattern, c = card(page, project)) {
  const f = c.getByLabel("Final message");
  await f.filter({ hasText: pattern }).waitFor({ timeout: T });
  return await f.innerText();
}

// answer checks the option and answers the step; a refusal fails the test
// with its reason.
async function answer(c, option) {
  const radio = c.getByRole("radio", { name: option });
  await radio.check({ timeout: T });
  const form = c.locator("form").filter({ has: c.page().getByRole("radio", { name: option }) });
  await form.getByRole("button", { name: "Answer" }).click();
  // Evidence: the step leaves (its radio is gone) or a refusal shows.
  const bad = form.locator(".error");
  const deadline = Date.now() + T;
  for (;;) {
    if (await bad.count()) throw new Error(`answering ${option}: ${await bad.innerText()}`);
    if (!(await radio.count())) return;
    if (Date.now() > deadline) throw new Error(`answering ${option}: the step never left`);
    await radio.waitFor({ state: "detached", timeout: 1000 }).catch(() => {});
  }
}

// The operator's REST API, from outside the page.
async function rest(method, p, body) {
  const r = await fetch(URL + p, { method, headers: { Authorization: `Bearer ${OP}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// until polls fn (a page's state) until it is truthy.
async function until(what, fn) {
  const deadline = Date.now() + T;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const notes = (page) => page.evaluate(() => window.__notes.map((x) => ({ title: x.title, body: x.body })));
const item = (page, project, kind) => page.locator(`article.item[data-kind="${kind}"]`, { hasText: project });

// The "Needs you" queue: two panes' permission prompts and a third's
// question, each announced once by a notification while the page shows
// another view; approved, refused when changed, closed and answered from
// the queue; the overview while they wait.
async function needsYou(page) {
  await page.context().grantPermissions(["notifications"], { origin: URL });
  await page.getByRole("link", { name: /^Needs you/ }).click();
  await page.getByRole("heading", { name: "Needs you" }).waitFor({ timeout: T });
  await page.getByText("Nothing needs you now.").waitFor({ timeout: T });
  if ((await page.title()) !== "AKK") throw new Error(`title with nothing waiting: ${await page.title()}`);
  // Asked on a click, never on load.
  await page.getByLabel("Notify me when something new waits").check();
  await until("notifications on", () => page.evaluate(() => localStorage.getItem("akk.notify") === "on"));
  // This browser asked for a push subscription: a headless Chromium has no
  // push service, so the page says so and keeps its own notifications.
  const pushState = await page.locator("[data-push]").first().getAttribute("data-push", { timeout: T });
  log("push subscription in this browser:", pushState, await page.locator("[data-push]").first().innerText());
  await check(page, "needs-empty");

  // Three things start to wait while the page shows the agents.
  await page.getByRole("link", { name: "Agents", exact: true }).click();
  await page.getByRole("heading", { name: "Agents" }).waitFor({ timeout: T });
  const asks = [
    [CLAUDE, '[[akk:bash cmd="echo ran >> akk-queue-once && echo akk-queue-ran"]] a prompt for the queue', "awaiting_approval", /^Claude Code/],
    [CLAUDE2, '[[akk:bash cmd="touch akk-queue-two && echo akk-queue-two"]] a prompt that changes under a page', "awaiting_approval", /^Claude Code/],
    [CODEX, "[[akk:ask questions=1]] pick a color in the queue", "awaiting_interaction", /^Codex/],
  ];
  for (const [i, [project, task, state, who]] of asks.entries()) {
    await send(page, project, task);
    await cardState(page, project, state);
    const ns = await until(`notification ${i + 1}`, async () => { const n = await notes(page); return n.length > i && n; });
    if (ns.length !== i + 1) throw new Error(`${ns.length} notifications after ${i + 1} items: ${JSON.stringify(ns)}`);
    if (!who.test(ns[i].title) || !ns[i].title.endsWith("needs you") || !ns[i].body) throw new Error(`notification ${JSON.stringify(ns[i])}`);
  }
  log("three items, one notification each:", JSON.stringify(await notes(page)));
  await until("the title's count", async () => (await page.title()) === "(3) AKK");
  await page.getByRole("link", { name: "Needs you 3", exact: true }).waitFor({ timeout: T });

  // Clicking the question's notification opens its item.
  await page.evaluate(() => window.__notes[2].n.dispatchEvent(new Event("click")));
  await page.getByRole("heading", { name: "Needs you" }).waitFor({ timeout: T });
  await until("the question's item focused", () => page.evaluate(() =>
    location.hash.startsWith("#/needs/item-") && document.activeElement && (document.activeElement.dataset.item || "").startsWith("q:")));
  // (A step that cannot be read for a moment shows as one to answer in the
  // terminal until a read can: wait for its form.)
  await item(page, CODEX, "question").getByRole("radio", { name: /Blue/ }).waitFor({ timeout: T });
  const kinds = await page.locator("article.item").evaluateAll((els) => els.map((e) => e.dataset.kind));
  if (kinds.join(",") !== "approval,approval,question") throw new Error(`the queue holds ${kinds}`);
  const first = await page.locator("article.item").first().innerText();
  if (!first.includes(CLAUDE) || first.includes(CLAUDE2)) throw new Error(`oldest first: ${first}`);
  await checkDark(page, "needs");
  log("the queue: two prompts and a question, oldest first; the notification opened its item");

  // The overview while they wait: filter and sort.
  await page.getByRole("link", { name: "Overview" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor({ timeout: T });
  const rows = page.locator("li.row");
  await rows.filter({ hasText: CLAUDE2 }).waitFor({ timeout: T });
  const top = await rows.evaluateAll((els) => els.slice(0, 3).map((e) => e.dataset.state).sort().join(","));
  if (top !== "awaiting_approval,awaiting_approval,awaiting_interaction") throw new Error(`attention first: ${top}`);
  await page.getByLabel("Agent", { exact: true }).selectOption("claude");
  await until("two Claude Code rows", async () => (await rows.count()) === 2);
  await page.getByLabel("Agent", { exact: true }).selectOption("all");
  await page.getByLabel("State", { exact: true }).selectOption("awaiting_interaction");
  await until("the question's row alone", async () => (await rows.count()) === 1 && (await rows.first().innerText()).includes(CODEX));
  await page.getByLabel("State", { exact: true }).selectOption("all");
  await page.getByLabel("Sort", { exact: true }).selectOption("name");
  await until("all rows", async () => (await rows.count()) >= 5);
  await page.getByLabel("Sort", { exact: true }).selectOption("attention");
  await checkDark(page, "overview");
  log("the overview filtered by agent and state and sorted");

  // Approve the first prompt from the queue: its item leaves, the command runs.
  await page.getByRole("link", { name: /^Needs you/ }).click();
  const a1 = item(page, CLAUDE, "approval");
  await a1.getByRole("button", { name: "Approve once" }).click();
  await a1.waitFor({ state: "detached", timeout: T });
  await until("the title's count", async () => (await page.title()) === "(2) AKK");
  log("approved from the queue; the item left");
  // A new prompt of the conversation just acted on, while another view
  // shows: it is announced too.
  await page.getByRole("link", { name: "Agents", exact: true }).click();
  await page.getByRole("heading", { name: "Agents" }).waitFor({ timeout: T });
  await send(page, CLAUDE, '[[akk:bash cmd="touch akk-queue-again && echo akk-queue-ran"]] a prompt right after the last');
  await cardState(page, CLAUDE, "awaiting_approval");
  await until("notification 4", async () => (await notes(page)).length === 4);
  await card(page, CLAUDE).getByRole("button", { name: "Approve once" }).click();
  await page.getByRole("link", { name: /^Needs you/ }).click();
  await page.getByRole("heading", { name: "Needs you" }).waitFor({ timeout: T });
  await until("the title's count", async () => (await page.title()) === "(2) AKK");
  log("a prompt right after an answer on the same conversation was announced");

  // A prompt that changed after a page read it: the second page holds the
  // old offer; the first rejects it; the second's click is refused and its
  // queue shows what waits now.
  const stale = await page.context().newPage();
  stale.on("pageerror", (e) => { console.error("dashboard: page error:", e.message); failed = true; });
  await stale.route("**/v1/events", (r) => r.abort());
  await stale.goto(URL + "/#/needs");
  const staleItem = item(stale, CLAUDE2, "approval");
  await staleItem.getByRole("button", { name: "Approve once" }).waitFor({ timeout: T });
  // A fresh tab counts the wait from when the Turn began to wait, as akkd says.
  const row2 = (await rest("GET", "/v1/conversations")).conversations.find((x) => x.project === CLAUDE2 && x.terminal);
  const shownSince = await staleItem.locator("time[data-since]").getAttribute("datetime");
  if (!row2.managed.current_turn.waiting_since || Date.parse(shownSince) !== Date.parse(row2.managed.current_turn.waiting_since)) {
    throw new Error(`a fresh tab's wait starts ${shownSince}, akkd says ${row2.managed.current_turn.waiting_since}`);
  }
  await item(page, CLAUDE2, "approval").getByRole("button", { name: "Reject" }).click();
  await item(page, CLAUDE2, "approval").waitFor({ state: "detached", timeout: T });
  await staleItem.getByRole("button", { name: "Approve once" }).click();
  const refusal = stale.getByRole("alert").filter({ hasText: "Not answered" });
  await refusal.waitFor({ timeout: T });
  await staleItem.waitFor({ state: "detached", timeout: T });
  log("a changed prompt was refused in the queue:", await refusal.innerText());
  await shot(stale, "needs-changed");
  await stale.close();

  // A rejected prompt leaves Claude's Turn waiting for words: close it from the queue.
  const turnState = async () => {
    const b = await rest("GET", "/v1/conversations");
    const c = b.conversations.find((x) => x.project === CLAUDE2 && x.terminal);
    return c && c.managed.current_turn ? c.managed.current_turn.state : "none";
  };
  const st = await until("the rejected Turn settles", async () => { const s = await turnState(); return s !== "awaiting_approval" && s !== "working" && s; });
  if (st === "waiting_for_host") {
    const w = item(page, CLAUDE2, "waiting");
    await w.getByLabel("Respond inside this Turn").waitFor({ timeout: T });
    await w.getByRole("button", { name: "Close" }).click();
    await w.waitFor({ state: "detached", timeout: T });
    log("closed a Turn waiting for words from the queue");
  }

  // Answer the question from the queue.
  const q = item(page, CODEX, "question");
  await q.getByRole("radio", { name: /Blue/ }).check({ timeout: T });
  await q.getByRole("button", { name: "Answer" }).click();
  await q.waitFor({ state: "detached", timeout: T });
  await until("nothing waits", async () => (await page.title()) === "AKK");
  await page.getByText("Nothing needs you now.").waitFor({ timeout: T });
  const ns = await notes(page);
  if (ns.length !== 4) throw new Error(`${ns.length} notifications in all: ${JSON.stringify(ns)}`);
  // Turned off again (kept in this browser): the stand-ins below raise nothing.
  await page.getByLabel("Notify me when something new waits").uncheck();
  await until("notifications off", () => page.evaluate(() => localStorage.getItem("akk.notify") === "off"));
  await page.getByRole("link", { name: "Agents", exact: true }).click();
  await finalMessage(page, CLAUDE, /akk-queue-ran/);
  await finalMessage(page, CODEX, /Blue/);
  log("answered the question from the queue; nothing waits; four notifications in all");

  // The service worker keeps the shell, never an API answer.
  const cached = await page.evaluate(async () => {
    const reg = await navigator.serviceWorker.ready;
    await fetch("/v1/conversations", { credentials: "same-origin" });
    const urls = [];
    for (const k of await caches.keys()) for (const r of await (await caches.open(k)).keys()) urls.push(r.url);
    return { scope: reg.scope, urls, controlled: !!navigator.serviceWorker.controller };
  });
  if (!cached.urls.some((u) => u.endsWith("/ui/app.js"))) throw new Error(`the shell is not cached: ${cached.urls}`);
  const api = cached.urls.filter((u) => /^\/(v1|mcp)(\/|$)/.test(new globalThis.URL(u).pathname));
  if (api.length) throw new Error(`the service worker cached API answers: ${api}`);
  const mf = await page.evaluate(async () => (await fetch(document.querySelector('link[rel="manifest"]').href)).json());
  if (mf.display !== "standalone" || !mf.icons.length) throw new Error(`manifest ${JSON.stringify(mf)}`);
  log(`the service worker (scope ${cached.scope}, controlling: ${cached.controlled}) caches ${cached.urls.length} shell files and no API answer`);
}

// A push as AKK sends it (its payload's shape is TestE2EWebPush's),
// delivered to the dashboard's service worker as a push service would
// (DevTools' ServiceWorker.deliverPushMessage): the worker shows it as a
// notification with its title, body and tag, with no page involved.
async function pushShown(page) {
  const cdp = await page.context().newCDPSession(page);
  const regs = [];
  cdp.on("ServiceWorker.workerRegistrationUpdated", (e) => regs.push(...e.registrations));
  await cdp.send("ServiceWorker.enable");
  const reg = await until("the service worker's registration", async () => regs.find((r) => r.scopeURL === URL + "/" && !r.isDeleted));
  const payload = { type: "turn.approval_required", title: "Claude Code asks for permission", body: "/project\ntouch akk-pushed",
    tag: "turn_pushtest:turn.approval_required", url: "/#/needs/turn_pushtest", turn_id: "turn_pushtest",
    actions: [{ action: "approve_once", title: "Approve once", token: "t".repeat(43) }, { action: "reject", title: "Reject", token: "u".repeat(43) }] };
  await cdp.send("ServiceWorker.deliverPushMessage", { origin: URL, registrationId: reg.registrationId, data: JSON.stringify(payload) });
  const shown = await until("the push's notification", async () => {
    const ns = await page.evaluate(async () => {
      const r = await navigator.serviceWorker.ready;
      return (await r.getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data,
        actions: (n.actions || []).map((a) => `${a.action}:${a.title}`) }));
    });
    return ns.find((n) => n.tag === payload.tag);
  });
  if (shown.title !== payload.title || shown.body !== payload.body || !shown.data || shown.data.url !== "/#/needs/turn_pushtest" ||
    shown.actions.join(",") !== "approve_once:Approve once,reject:Reject" || shown.data.tokens.approve_once !== "t".repeat(43)) {
    throw new Error(`the push showed ${JSON.stringify(shown)}`);
  }
  await cdp.send("ServiceWorker.disable");
  await cdp.detach();
  log("a push reached the service worker and showed as a notification:", shown.title, "with", shown.actions.join(" / "));
}

// A real prompt's push, as AKK sent it to the operator's phone (read from
// the stand-in push service), handed to the service worker as the phone's
// push service would; its "Approve once" clicked (the worker's
// notification-click path, which headless Chromium cannot press): the
// command runs once, the notification says so, and the token is spent.
async function pushTapped(page) {
  await page.getByRole("link", { name: "Agents", exact: true }).click();
  await cardState(page, CLAUDE, "idle");
  await send(page, CLAUDE, '[[akk:bash cmd="touch akk-tapped && echo akk-tapped-ran"]] a prompt answered from the phone');
  await cardState(page, CLAUDE, "awaiting_approval");
  let seen = [];
  const payload = await until("AKK's push for the prompt", async () => {
    seen = (await (await fetch(PUSHES)).json()) || [];
    return seen.find((p) => p.type === "turn.approval_required" && (p.body || "").includes("akk-tapped") && (p.actions || []).length === 2);
  }).catch((e) => {
    throw new Error(`${e.message}; the pushes sent: ${JSON.stringify(seen.map((p) => ({ type: p.type, body: p.body, actions: (p.actions || []).length })))}`);
  });
  const cdp = await page.context().newCDPSession(page);
  const regs = [];
  cdp.on("ServiceWorker.workerRegistrationUpdated", (e) => regs.push(...e.registrations));
  await cdp.send("ServiceWorker.enable");
  const reg = await until("the service worker's registration", async () => regs.find((r) => r.scopeURL === URL + "/" && !r.isDeleted));
  await cdp.send("ServiceWorker.deliverPushMessage", { origin: URL, registrationId: reg.registrationId, data: JSON.stringify(payload) });
  // DevTools' ServiceWorker domain stays on until the worker has shown the
  // push, as in pushShown: turned off at once, it may drop the push it is
  // still dispatching (the notification never came, once).
  const sw = await until("the service worker", async () => page.context().serviceWorkers().find((w) => w.url().endsWith("/sw.js")));
  const buttons = await until("the push's notification", async () => sw.evaluate(async (tag) => {
    const [n] = await self.registration.getNotifications({ tag });
    return n && n.actions.map((a) => a.title).join(" / ");
  }, payload.tag)).catch(async (e) => {
    const tags = await page.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => n.tag));
    throw new Error(`${e.message}; the workers: ${page.context().serviceWorkers().map((w) => w.url())}; the notifications shown: ${tags}`);
  });
  await cdp.send("ServiceWorker.disable");
  await cdp.detach();
  if (buttons !== "Approve once / Reject") throw new Error(`the notification's buttons: ${buttons}`);
  const said = await sw.evaluate(async (tag) => {
    const [n] = await self.registration.getNotifications({ tag });
    await notificationClicked(n, "approve_once"); // as the button's click does
    const [after] = await self.registration.getNotifications({ tag });
    return after && after.body;
  }, payload.tag);
  if (said !== "Approved once.") throw new Error(`after the tap the notification says ${said}`);
  await finalMessage(page, CLAUDE, /akk-tapped-ran/);
  const token = payload.actions.find((a) => a.action === "approve_once").token;
  const again = await page.evaluate(async (t) => (await fetch(`/v1/actions/${t}`, { method: "POST", credentials: "omit" })).status, token);
  if (again !== 410) throw new Error(`the same tap again answered ${again}`);
  log("a real prompt's push, tapped in the service worker: approved once; the token then spent (410)");
}

// 100 stand-in rows (copies of a real pane's row, a third with a
// permission prompt, a third working), served to the page in place of the
// list: each update's render is timed in the page (performance.measure
// from the list's arrival to the committed DOM).
async function standIns(page) {
  const real = (await rest("GET", "/v1/conversations")).conversations.find((c) => c.project === CLAUDE && c.terminal);
  let round = 0;
  const rows = () => Array.from({ length: 100 }, (_, i) => {
    const k = (i + round) % 3;
    return { ...real, conversation_id: `conv_standin${i}`, title: `stand-in ${i}`, project: `/srv/standin/${i}`,
      terminal: { ...real.terminal, terminal_id: `term_standin${i}`, screen_state: ["idle", "working", "awaiting_approval"][k] },
      approval: k === 2 ? { prompt_kind: "bash", tool: "Bash", command_excerpt: `make test-${i}`, decisions: ["approve_once", "reject"], manual_required: false } : undefined,
      managed: { held_by_other: false }, watches: [], warnings: [], available_actions: [] };
  });
  const serve = (r) => r.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ conversations: rows(), unavailable_managed_turns: [] }) });
  await page.route("**/v1/conversations", serve);
  const figures = {};
  try {
    for (const [name, link, heading] of [["overview", "Overview", "Overview"], ["needs", /^Needs you/, "Needs you"]]) {
      await page.getByRole("link", { name: link }).click();
      await page.getByRole("heading", { name: heading }).waitFor({ timeout: T });
      const ms = [];
      for (round = 1; round <= 21; round++) {
        await page.evaluate(() => performance.clearMeasures());
        await page.getByRole("button", { name: "Refresh" }).click();
        const d = await until(`${name} update ${round}`, () => page.evaluate((n) => {
          const m = performance.getEntriesByName(`akk-render:${n}`);
          return m.length ? m[m.length - 1].duration : 0;
        }, name));
        if (round > 1) ms.push(d); // the first includes the view's first layout
      }
      ms.sort((a, b) => a - b);
      figures[name] = { median: ms[Math.floor(ms.length / 2)], p95: ms[Math.floor(ms.length * 0.95)], n: ms.length };
      if (name === "overview" && (await page.locator("li.row").count()) !== 100) throw new Error("not 100 rows");
      if (name === "needs" && (await page.locator("article.item").count()) < 30) throw new Error("not the stand-ins' prompts");
    }
  } finally {
    await page.unroute("**/v1/conversations", serve);
  }
  if ((await notes(page)).length !== 4) throw new Error("notifications raised while they were off");
  for (const [n, f] of Object.entries(figures)) log(`100 stand-in rows, ${n} update: median ${f.median.toFixed(1)} ms, p95 ${f.p95.toFixed(1)} ms (${f.n} updates)`);
  await page.getByRole("link", { name: "Agents", exact: true }).click();
  await page.getByRole("heading", { name: "Agents" }).waitFor({ timeout: T });
}

async function run() {
  const page = await newPage();

  // Sign in: the token is exchanged for a cookie and kept nowhere else.
  await page.goto(URL + "/");
  await page.getByRole("heading", { name: "Sign in to AKK" }).waitFor();
  if (await page.getByRole("navigation", { name: "Main" }).isVisible()) throw new Error("the navigation shows while signed out");
  await check(page, "signin");
  await signIn(page, OP);
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + location.href);
  if (stored.includes(OP)) throw new Error("the token is stored in the page or its URL");
  const cookies = await page.context().cookies();
  const c = cookies.find((x) => x.name === "akk_session");
  if (!c || !c.httpOnly || c.sameSite !== "Strict") throw new Error(`session cookie ${JSON.stringify(c)}`);
  log("signed in; cookie HttpOnly SameSite=Strict; token not stored");

  // Both agents' cards, titled by project and tmux session:window (never
  // by what the agent writes in its pane title), with buttons named for
  // what they do (no ids).
  await cardState(page, CLAUDE, "idle");
  await cardState(page, CODEX, "idle");
  for (const c of [card(page, CLAUDE), card(page, CODEX), backendCard(page, MERGED)]) {
    const h = await c.getByRole("heading", { level: 2 }).innerText({ timeout: T });
    const p = [CLAUDE, CODEX, MERGED].find((x) => h.startsWith(x.split("/").pop() + " · ")) || "";
    if (!p || !/ · [^ ]+:[^ ]*$/.test(h)) throw new Error(`card title ${JSON.stringify(h)}`);
  }
  const idButtons = await page.getByRole("button", { name: /(turn|watch|msg|conv|term)_[A-Za-z0-9]{4,}/ }).allInnerTexts();
  if (idButtons.length) throw new Error(`buttons named with ids: ${idButtons}`);
  await check(page, "agents");
  // Each says how AKK answers what its agent asks: these pinned versions
  // through their screens (no hook installed here).
  for (const p of [CLAUDE, CODEX]) {
    const dd = card(page, p).locator('dd[data-channels="screen/screen"]');
    await dd.waitFor({ timeout: T });
    if (!/prompts: the screen · questions: the screen/.test(await dd.innerText())) throw new Error(`the card of ${p} says ${await dd.innerText()}`);
  }

  // A task: working, then idle with the final message, live.
  await send(page, CLAUDE, "[[akk:slow secs=4]] a task from the dashboard");
  await cardState(page, CLAUDE, "working");
  await shot(page, "agents-working");
  await cardState(page, CLAUDE, "idle");
  const fm = await finalMessage(page, CLAUDE, /\S/);
  log("task went working → idle with its final message:", JSON.stringify(fm.slice(0, 60)));

  // The card's screen, live and read-only, only while it is open: the pane
  // as the agent shows it, then the next task appearing on it.
  {
    const cc = card(page, CLAUDE);
    const summary = cc.locator("summary", { hasText: "Screen (live, redacted)" });
    await summary.click();
    const scr = cc.getByLabel("Screen", { exact: true });
    const shown = async () => (await scr.innerText({ timeout: 1000 }).catch(() => ""));
    await until("the card's screen shows the final message", async () => (await shown()).includes(fm.trim().slice(0, 24)));
    await until("the agent's colours on the card's screen", async () => (await scr.locator("span[style*='color']").count()) > 0);
    await send(page, CLAUDE, "[[akk:slow secs=3]] a task seen on the card's screen");
    await until("the card's screen shows the new task", async () => (await shown()).includes("a task seen on the card's screen"));
    await cardState(page, CLAUDE, "idle");
    await summary.click();
    log("the card followed the pane's screen while open");
  }

  // (After the first task: Claude's thread stays titled by it.)
  await needsYou(page);
  await pushShown(page);
  await pushTapped(page);

  // A task typed and not sent is kept while the page shows other views
  // (and the card is built again): the backend card's, across the stand-in step.
  const bc = backendCard(page, BACKEND);
  const backendTask = "[[akk:slow secs=4]] a task for the backend";
  let backendConv;
  {
    await page.getByRole("link", { name: "Agents", exact: true }).click();
    const box = bc.getByLabel("Send a task", { exact: true }).filter({ visible: true });
    await box.waitFor({ timeout: T });
    await box.fill(backendTask);
    backendConv = await bc.getAttribute("data-conversation");
  }
  await standIns(page);

  // A backend conversation: a project's Codex thread with no pane, sent
  // to through its daemon, live from working to idle with its answer.
  await bc.and(page.locator('[data-state="idle"]')).waitFor({ timeout: T });
  await bc.getByText(/^Codex app-server only: no pane is proven to show this thread/).waitFor({ timeout: T });
  {
    // (The project's conversation is the same: AKK keeps its thread loaded.)
    const now = await bc.getAttribute("data-conversation");
    if (now !== backendConv) throw new Error(`the backend project's conversation changed from ${backendConv} to ${now}`);
    const kept = await bc.getByLabel("Send a task", { exact: true }).filter({ visible: true }).inputValue({ timeout: T });
    if (kept !== backendTask) throw new Error(`the backend card's draft is ${JSON.stringify(kept)} after other views`);
    log("a task typed and not sent was kept across other views");
  }
  await check(page, "agents-backend");
  await send(page, BACKEND, backendTask, bc);
  await bc.and(page.locator('[data-state="working"]')).waitFor({ timeout: T });
  await bc.and(page.locator('[data-state="idle"]')).waitFor({ timeout: T });
  const bm = await finalMessage(page, BACKEND, /\S/, bc);
  log("backend task went working → idle with its final message:", JSON.stringify(bm.slice(0, 60)));

  // A Codex pane proven to show its thread (it names the thread in the pane
  // title): one card for the two, its task sent through the daemon, the
  // pane's own controls kept.
  const mc = backendCard(page, MERGED);
  await mc.getByText("Codex app-server (the pane shows this thread)").waitFor({ timeout: T });
  if (await card(page, MERGED).count()) throw new Error("the merged pane still has a card of its own");
  await mc.locator("details", { hasText: "Threads" }).waitFor({ timeout: T });
  await check(page, "agents-merged");
  await send(page, MERGED, "a task for the merged card", mc);
  await finalMessage(page, MERGED, /Fake model reply/, mc);
  log("sent a task from a pane's card merged with its thread; it completed through the daemon");

  // The thread's model and effort, read from its daemon and chosen with the
  // next task: the daemon keeps the effort chosen.
  const mb = bc.locator("details", { hasText: "Model and effort" });
  await mb.locator("summary").click();
  const now = mb.locator("strong[data-effort]");
  await now.waitFor({ timeout: T });
  const was = await now.getAttribute("data-effort");
  const efforts = await mb.getByLabel("Effort").locator("option").allInnerTexts();
  const pick = efforts.find((e) => e !== was && e !== "none" && e !== "minimal");
  if (!pick) throw new Error(`no other effort than ${was} in ${efforts}`);
  await mb.getByLabel("Effort").selectOption(pick, { timeout: T });
  await check(page, "backend-models");
  await send(page, BACKEND, "a backend task with another effort", bc);
  await bc.and(page.locator('[data-state="idle"]')).waitFor({ timeout: T });
  await finalMessage(page, BACKEND, /Fake model reply/, bc);
  const mb2 = bc.locator("details", { hasText: "Model and effort" });
  if (await mb2.evaluate((d) => d.open)) await mb2.locator("summary").click();
  await mb2.locator("summary").click();
  await mb2.locator(`strong[data-effort="${pick}"]`).waitFor({ timeout: T });
  log(`chose the backend thread's effort: ${was} → ${pick}`);

  // A permission prompt approved with a click.
  await send(page, CLAUDE, "[[akk:bash]] run it from the dashboard");
  await cardState(page, CLAUDE, "awaiting_approval");
  const claude = card(page, CLAUDE);
  await claude.getByLabel("Command").waitFor({ timeout: T });
  await check(page, "prompt");
  await claude.getByRole("button", { name: "Approve once" }).click();
  await claude.getByText("Approve once: done.").or(claude.getByLabel("Final message")).first().waitFor({ timeout: T });
  await finalMessage(page, CLAUDE, /akk-bash-ran/);
  log("approved a prompt; the command ran");

  // Another rejected (Codex).
  await send(page, CODEX, "[[akk:bash]] run it, to be rejected");
  await cardState(page, CODEX, "awaiting_approval");
  await card(page, CODEX).getByRole("button", { name: "Reject" }).click();
  await card(page, CODEX).and(page.locator(':not([data-state="awaiting_approval"])')).waitFor({ timeout: T });
  log("rejected a prompt");

  // Events faster than a render: every list read is held 400 ms while the
  // operator writes a host's (empty) approval policy every 100 ms (each
  // write is an event, and no webhook). The page still draws: a task sent
  // from a card shows its final message. (A newer render used to drop the
  // one running, so none ever drew.)
  {
    const auth = { Authorization: `Bearer ${OP}` };
    const hosts = (await (await fetch(URL + "/v1/hosts", { headers: auth })).json()).hosts;
    const slow = async (r) => { await new Promise((res) => setTimeout(res, 400)); await r.continue().catch(() => {}); };
    await page.route("**/v1/conversations", slow);
    let flooding = true;
    let events = 0;
    const flood = (async () => {
      while (flooding) {
        const r = await fetch(`${URL}/v1/hosts/${hosts[0].host_id}/approval-policy`,
          { method: "PUT", headers: { ...auth, "Content-Type": "application/json" }, body: '{"rules":[]}' });
        if (r.status >= 300) throw new Error(`policy: ${r.status}`);
        events++;
        await new Promise((res) => setTimeout(res, 100));
      }
    })();
    try {
      await cardState(page, CLAUDE, "idle");
      const task = "a task while events flood the page";
      const token = "akk-reply-" + crypto.createHash("sha256").update(task).digest("hex").slice(0, 8);
      await send(page, CLAUDE, task);
      await finalMessage(page, CLAUDE, new RegExp(token));
    } finally {
      flooding = false;
      await flood;
      await page.unroute("**/v1/conversations", slow);
    }
    log(`the page drew a task's end under ${events} events and slow list reads`);
  }


  // A changed prompt is refused: a second page that hears no events keeps
  // an old offer; the prompt is answered elsewhere; its click is refused.
  await send(page, CLAUDE, "[[akk:bash cmd=\"touch akk-ui-b && echo akk-ui-b\"]] a prompt that changes");
  await cardState(page, CLAUDE, "awaiting_approval");
  await claude.getByRole("button", { name: "Reject" }).waitFor({ timeout: T });
  const stale = await page.context().newPage();
  await stale.route("**/v1/events", (r) => r.abort());
  await stale.goto(URL + "/#/agents");
  await stale.getByText("The live event stream dropped").waitFor({ timeout: T });
  const staleCard = card(stale, CLAUDE);
  await staleCard.getByRole("button", { name: "Approve once" }).waitFor({ timeout: T });
  await claude.getByRole("button", { name: "Reject" }).click();
  await card(page, CLAUDE).and(page.locator(':not([data-state="awaiting_approval"])')).waitFor({ timeout: T });
  await staleCard.getByRole("button", { name: "Approve once" }).click();
  // The refusal stays on the card, which now shows the prompt gone.
  const refusal = staleCard.getByRole("alert").filter({ hasText: "Not answered" });
  await refusal.waitFor({ timeout: T });
  await staleCard.getByRole("button", { name: "Approve once" }).waitFor({ state: "detached", timeout: T });
  const why = await refusal.innerText();
  if (!/prompt|offer|answered|changed|not/i.test(why)) throw new Error(`stale approval: ${why}`);
  await shot(stale, "prompt-changed");
  await stale.close();
  log("a changed prompt was refused:", why);

  // A questionnaire step, single choice (Codex, in Plan mode).
  await cardState(page, CODEX, "idle");
  await send(page, CODEX, "[[akk:ask questions=1]] pick a color in the dashboard");
  await cardState(page, CODEX, "awaiting_interaction");
  const codex = card(page, CODEX);
  await codex.getByRole("radio", { name: /Blue/ }).waitFor({ timeout: T });
  await check(page, "question");
  await answer(codex, /Blue/);
  await finalMessage(page, CODEX, /Blue/);
  log("answered a single-choice step");

  // What a Turn changed (Codex): two files, each with its diff from the
  // agent's record, on the Turn's page; the secret in one redacted.
  await cardState(page, CODEX, "idle");
  fs.writeFileSync(path.join(CODEX, "akk-edit-old.txt"), "one\ntwo\nthree\n");
  await send(page, CODEX, `[[akk:edit dir="${CODEX}"]] edit two files from the dashboard`);
  await finalMessage(page, CODEX, /Updated the following files/);
  await codex.getByRole("link", { name: /^turn_/ }).first().click();
  const changes = page.getByRole("region", { name: "Changes" });
  await changes.locator("details.change").nth(1).waitFor({ timeout: T });
  const [made, changed] = await changes.locator("details.change").allInnerTexts();
  if (!/created/.test(made) || !made.includes("akk-edit-new.txt") || !made.includes("+alpha") || made.includes("AKIA")) throw new Error(`the created file: ${made}`);
  if (!/updated/.test(changed) || !changed.includes("akk-edit-old.txt") || !changed.includes("-two") || !changed.includes("+TWO")) throw new Error(`the changed file: ${changed}`);
  if ((await changes.locator(".diff-add").count()) < 4 || (await changes.locator(".diff-del").count()) !== 1) throw new Error("the diff lines are not marked by kind");
  await checkDark(page, "turn-changes");
  await page.getByRole("link", { name: "Agents", exact: true }).click();
  await page.getByRole("heading", { name: "Agents" }).waitFor({ timeout: T });
  log("a Turn's page lists the two files it changed, with their diffs");

  // An async question (Codex): the task works on while it waits; the block
  // is opened, the free-text row typed, and the answer queued for the
  // agent's next task (the Go side checks the model got it).
  await cardState(page, CODEX, "idle");
  await send(page, CODEX, "[[akk:ask_async questions=1 secs=20]] ask while working in the dashboard");
  await answer(codex, /^Answer$/);
  const blue = codex.getByRole("radio", { name: /Blue/ });
  await blue.waitFor({ timeout: T });
  await check(page, "async-question");
  const asyncForm = codex.locator("form").filter({ has: page.getByRole("radio", { name: /Blue/ }) });
  await asyncForm.getByRole("radio", { name: /^Other/ }).check();
  await asyncForm.getByLabel("Other: your words").fill("Teal from the dashboard");
  await asyncForm.getByRole("radio", { name: /Queued for its next task/ }).check();
  await asyncForm.getByRole("button", { name: "Answer" }).click();
  await blue.waitFor({ state: "detached", timeout: T });
  await finalMessage(page, CODEX, /done\./);
  log("queued an async question's answer");

  // Two questions (Claude), each step answered as it comes.
  await cardState(page, CLAUDE, "idle");
  await send(page, CLAUDE, "[[akk:ask questions=2]] two questions in the dashboard");
  await cardState(page, CLAUDE, "awaiting_interaction");
  await answer(claude, /Red/);
  await answer(claude, /Small/);
  // Claude Code reviews the answers before submitting them.
  for (;;) {
    const done = claude.getByLabel("Final message");
    const submit = claude.getByRole("radio", { name: /Submit/ });
    await done.or(submit).first().waitFor({ timeout: T });
    if (await done.count()) break;
    await answer(claude, /Submit/);
  }
  await finalMessage(page, CLAUDE, /Small/);
  log("answered a two-question questionnaire");

  // The pane's threads, from the agent's records: this run's thread is the
  // current one, titled by its first request.
  const threads = claude.locator("details", { hasText: "Threads" });
  await threads.locator("summary").click();
  await threads.getByRole("listitem").filter({ hasText: "a task from the dashboard" }).filter({ hasText: "current" }).waitFor({ timeout: T });
  log("listed the pane's threads");

  // The agent's own controls, from the card: its status view, its
  // permission mode, a new thread and back to the first one.
  await claude.getByRole("button", { name: "Inspect" }).click();
  await claude.locator("p.info", { hasText: "Status: thread" }).waitFor({ timeout: T });
  const perms = claude.locator("details", { hasText: "Permissions" });
  await perms.locator("summary").click();
  await perms.locator("strong[data-mode]").waitFor({ timeout: T });
  await perms.getByLabel("Mode").selectOption("plan", { timeout: T });
  await perms.getByRole("button", { name: "Apply" }).click();
  await claude.locator("p.info", { hasText: "Permission mode: plan" }).waitFor({ timeout: T });
  await perms.locator("summary").click();
  // The box read the mode again: it says plan, and only then offers a choice.
  await perms.locator('strong[data-mode="plan"]').waitFor({ timeout: T });
  await perms.getByLabel("Mode").selectOption("manual", { timeout: T });
  await perms.getByRole("button", { name: "Apply" }).click();
  await claude.locator("p.info", { hasText: "Permission mode: manual" }).waitFor({ timeout: T });
  await claude.getByRole("button", { name: "New thread" }).click();
  await claude.locator("p.info", { hasText: "New thread" }).waitFor({ timeout: T });
  await shot(page, "native-controls");
  // Read the threads again: close the list (left open above) and open it.
  if (await threads.evaluate((d) => d.open)) await threads.locator("summary").click();
  await threads.locator("summary").click();
  const threads2 = threads;
  await threads2.getByRole("listitem").filter({ hasText: "a task from the dashboard" }).getByRole("button", { name: "Resume" }).click({ timeout: T });
  await claude.locator("p.info", { hasText: "Resumed thread" }).waitFor({ timeout: T });
  log("inspected, changed the permission mode and back, started a new thread and resumed the first");

  // A Turn's page: timeline, progress, result, callbacks.
  const turnLink = claude.getByRole("link", { name: /^turn_/ }).first();
  const lastTurn = (await turnLink.innerText()).trim();
  await turnLink.click();
  await page.getByRole("heading", { name: "Timeline" }).waitFor();
  await page.locator("ol.timeline li", { hasText: "turn.completed" }).waitFor({ timeout: T });
  await check(page, "turn");

  // Hosts: register one, see its secrets once, ping it, see the delivery.
  await page.getByRole("link", { name: "Hosts" }).click();
  await page.getByRole("heading", { name: "Register a host" }).waitFor();
  await page.getByLabel("Name").fill("ui-host");
  await page.getByLabel("Webhook URL").fill(RECEIVER);
  await page.getByRole("button", { name: "Register" }).click();
  const secret = page.locator('[data-secret="Webhook secret"]');
  await secret.waitFor({ timeout: T });
  if (!(await secret.innerText()).startsWith("whsec_")) throw new Error("no webhook secret shown");
  await check(page, "hosts");
  const row = page.locator("tr", { hasText: "ui-host" });
  await row.getByRole("button", { name: "Ping" }).click();
  const delivered = page.locator('tr[data-state="delivered"]', { hasText: "host.ping" });
  for (let i = 0; ; i++) {
    if (await delivered.waitFor({ timeout: 2000 }).then(() => true, () => false)) break;
    if (i > 45) throw new Error("the ping was never delivered");
    await page.getByRole("button", { name: "Refresh" }).click();
  }
  log("registered a host and its ping was delivered");

  await page.getByRole("link", { name: "Doctor" }).click();
  await page.getByRole("heading", { name: "Doctor" }).waitFor();
  await check(page, "doctor");

  // Sign out ends the session.
  const turnURL = await page.evaluate(() => location.origin);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in to AKK" }).waitFor();
  if (await page.getByRole("navigation", { name: "Main" }).isVisible()) throw new Error("the navigation shows after signing out");
  const after = await page.evaluate(async (u) => (await fetch(u + "/v1/conversations")).status, turnURL);
  if (after !== 401) throw new Error(`after sign-out the API answered ${after}`);
  const kept = await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith("akk.")));
  if (kept.length) throw new Error(`after sign-out the page still keeps ${kept.join(", ")}`);
  log("signed out; the cookie no longer works and the page keeps nothing of the queue");

  // A host's session sees only its own records.
  const other = await newPage();
  await signIn(other, HOST_B);
  await card(other, CLAUDE).waitFor({ timeout: T });
  if (await card(other, CLAUDE).getByRole("link", { name: /^turn_/ }).count()) {
    throw new Error("host B sees a Turn it does not own");
  }
  await other.goto(URL + "/#/turn/" + lastTurn);
  await other.getByText(/no turn/).waitFor({ timeout: T });
  await shot(other, "host-session");
  log("a host session sees no other host's Turn");
}

// The start-up dialog of a pane started after the main run: its item
// says what the dialog asks, and that AKK never answers it.
async function dialog() {
  const page = await newPage();
  await page.goto(URL + "/");
  await signIn(page, OP);
  await page.goto(URL + "/#/needs");
  const d = item(page, DIALOG, "blocked");
  await d.waitFor({ timeout: T });
  const text = await d.innerText();
  if (!text.includes("The agent asks: “Is this a project you created or one you trust?”") || !text.includes("AKK never answers")) {
    throw new Error(`the dialog's item: ${text}`);
  }
  await shot(page, "needs-dialog");
  log("a start-up dialog's item says what it asks:", text.split("\n").find((l) => l.includes("asks")));
}

try {
  if (process.argv[2] === "dialog") await dialog();
  else await run();
} catch (e) {
  failed = true;
  console.error("dashboard: FAIL:", e && e.stack || e);
  for (const [i, p] of pages.entries()) {
    await shot(p, `failure-${i}`).catch(() => {});
    const trail = await p.evaluate(() => window.__trail || []).catch(() => []);
    for (const l of trail.slice(-40)) console.error(`dashboard: page ${i} trail: ${l}`);
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
