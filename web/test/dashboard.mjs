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
const RECEIVER = env("AKK_RECEIVER_URL");
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
  const page = await ctx.newPage();
  pages.push(page);
  page.on("pageerror", (e) => { console.error("dashboard: page error:", e.message); failed = true; });
  return page;
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
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

async function signIn(page, token) {
  await page.goto(URL + "/");
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
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
  const box = c.getByLabel("Send a task", { exact: true });
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
  await box.fill(text);
  await c.getByRole("button", { name: "Send" }).click();
  // Sent: the card says so, or (re-rendered by the Turn's first events)
  // links a Turn it did not link before.
  const fresh = c.getByRole("link", { name: /^turn_/ }).filter({ hasNotText: new RegExp(before.join("|") || "^$") });
  await c.getByText(/^Sent \(/).or(fresh).first().waitFor({ timeout: T });
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

async function run() {
  const page = await newPage();

  // Sign in: the token is exchanged for a cookie and kept nowhere else.
  await page.goto(URL + "/");
  await page.getByRole("heading", { name: "Sign in to AKK" }).waitFor();
  await check(page, "signin");
  await signIn(page, OP);
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + location.href);
  if (stored.includes(OP)) throw new Error("the token is stored in the page or its URL");
  const cookies = await page.context().cookies();
  const c = cookies.find((x) => x.name === "akk_session");
  if (!c || !c.httpOnly || c.sameSite !== "Strict") throw new Error(`session cookie ${JSON.stringify(c)}`);
  log("signed in; cookie HttpOnly SameSite=Strict; token not stored");

  // Both agents' cards.
  await cardState(page, CLAUDE, "idle");
  await cardState(page, CODEX, "idle");
  await check(page, "agents");

  // A task: working, then idle with the final message, live.
  await send(page, CLAUDE, "[[akk:slow secs=4]] a task from the dashboard");
  await cardState(page, CLAUDE, "working");
  await shot(page, "agents-working");
  await cardState(page, CLAUDE, "idle");
  const fm = await finalMessage(page, CLAUDE, /\S/);
  log("task went working → idle with its final message:", JSON.stringify(fm.slice(0, 60)));

  // A backend conversation: a project's Codex thread with no pane, sent
  // to through its daemon, live from working to idle with its answer.
  const bc = backendCard(page, BACKEND);
  await bc.and(page.locator('[data-state="idle"]')).waitFor({ timeout: T });
  await bc.getByText("Codex app-server (no pane)").waitFor({ timeout: T });
  await check(page, "agents-backend");
  await send(page, BACKEND, "[[akk:slow secs=4]] a task for the backend", bc);
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
  await stale.goto(URL + "/#/");
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
  const after = await page.evaluate(async (u) => (await fetch(u + "/v1/conversations")).status, turnURL);
  if (after !== 401) throw new Error(`after sign-out the API answered ${after}`);
  log("signed out; the cookie no longer works");

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
  log("a host session sees no other controller's Turn");
}

try {
  await run();
} catch (e) {
  failed = true;
  console.error("dashboard: FAIL:", e && e.stack || e);
  for (const [i, p] of pages.entries()) await shot(p, `failure-${i}`).catch(() => {});
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
