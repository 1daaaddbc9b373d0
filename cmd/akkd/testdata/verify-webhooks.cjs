// Verifies deliveries with the standardwebhooks npm package, an independent
// implementation of the spec. stdin: {"secret": "...", "deliveries": [{id, timestamp, signature, body}]}.
const { Webhook } = require("standardwebhooks");
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const { secret, deliveries } = JSON.parse(input);
  const wh = new Webhook(secret);
  for (const d of deliveries) {
    const payload = wh.verify(d.body, {
      "webhook-id": d.id,
      "webhook-timestamp": d.timestamp,
      "webhook-signature": d.signature,
    });
    if (!payload || typeof payload.type !== "string") throw new Error("verified payload has no type");
  }
  console.log(`verified ${deliveries.length}`);
});
