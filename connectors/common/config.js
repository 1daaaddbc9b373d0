// A connector's settings, from the environment: the names the CLI uses
// (AKK_URL, AKK_TOKEN) and two of the connectors' own.
export function config(env) {
  const cfg = {
    url: env.AKK_URL || "http://127.0.0.1:7788",
    token: env.AKK_TOKEN || "",
    secret: env.AKK_WEBHOOK_SECRET || "",
    listen: env.AKK_CALLBACK_LISTEN || "127.0.0.1:7790",
    server: "akk",
  };
  const missing = ["AKK_TOKEN", "AKK_WEBHOOK_SECRET"].filter((k) => !env[k]);
  return { cfg, missing };
}

// notStarted is why a connector without its settings does not start.
export function notStarted(missing) {
  return `AKK connector not started: ${missing.join(" and ")} not set (the host's token and webhook secret, from akk hosts add)`;
}

// splitAddr is AKK_CALLBACK_LISTEN's host and port.
export function splitAddr(addr) {
  const i = addr.lastIndexOf(":");
  if (i < 0) throw new Error(`AKK_CALLBACK_LISTEN ${addr} is not host:port`);
  return [addr.slice(0, i).replace(/^\[|\]$/g, ""), addr.slice(i + 1)];
}
