// AKK's callbacks, as a connector receives them: Standard Webhooks
// signatures (webhook-id, webhook-timestamp, webhook-signature:
// "v1," + base64(HMAC-SHA256(secret, id.timestamp.body))), checked before
// anything is read from the body, and the text a session is woken with.
import { createHmac, timingSafeEqual } from "node:crypto";

// toleranceSeconds is how far a delivery's timestamp may be from now.
export const toleranceSeconds = 300;

// verify checks one delivery and returns its parsed payload, or throws.
export function verify(secret, headers, body, now = Date.now()) {
  const id = headers["webhook-id"];
  const ts = headers["webhook-timestamp"];
  const sigs = headers["webhook-signature"];
  if (!id || !ts || !sigs) throw new Error("not a signed AKK callback (webhook-id, webhook-timestamp or webhook-signature missing)");
  const at = Number(ts);
  if (!Number.isInteger(at) || Math.abs(now / 1000 - at) > toleranceSeconds) {
    throw new Error("the callback's timestamp is too far from this machine's clock");
  }
  const key = Buffer.from(String(secret).replace(/^whsec_/, ""), "base64");
  const want = createHmac("sha256", key).update(`${id}.${ts}.`).update(body).digest();
  const ok = String(sigs)
    .split(" ")
    .some((s) => {
      const [v, b64] = s.split(",");
      if (v !== "v1" || !b64) return false;
      const got = Buffer.from(b64, "base64");
      return got.length === want.length && timingSafeEqual(got, want);
    });
  if (!ok) throw new Error("the callback's signature does not match this host's webhook secret");
  return { id, payload: JSON.parse(body.toString("utf8")) };
}

// wakeText is the message a callback wakes its session with (the same words
// as the OpenClaw recipe's hook template).
export function wakeText(payload) {
  const d = payload?.data ?? {};
  return `AKK ${payload?.type}: Turn ${d.turn_id} is ${d.state}. ${d.final_message ?? ""}${d.reason ?? ""} (A wake-up signal: read akk_status for this turn_id before acting.)`;
}

// receiver is the HTTP handler of a connector's callback listener: a POST
// whose signature holds is answered 204 and handed to take once per
// webhook-id; anything else gets 405 or 401 and is not read further.
export function receiver(secret, take) {
  const seen = new Set();
  return (req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST") {
        res.writeHead(405, { Allow: "POST" }).end();
        return;
      }
      let got;
      try {
        got = verify(secret, req.headers, Buffer.concat(chunks));
      } catch (err) {
        res.writeHead(401, { "Content-Type": "text/plain" }).end(String(err?.message ?? err));
        return;
      }
      res.writeHead(204).end();
      if (seen.has(got.id)) return;
      seen.add(got.id);
      if (seen.size > 10000) seen.delete(seen.values().next().value);
      take(got.payload);
    });
  };
}
