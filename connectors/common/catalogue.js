// The capability handshake every connector makes. AKK publishes its tool
// catalogue once (GET /v1/tools, the same list as its MCP tools/list, with a
// catalogue version); a connector lets its host register AKK's MCP server,
// then compares what the host really registered with that catalogue. On any
// difference the connector refuses to start and says what differs. No
// connector keeps a list of tool names of its own.

// fetchCatalogue reads AKK's catalogue with the host's token.
export async function fetchCatalogue(cfg) {
  const res = await fetch(new URL("/v1/tools", cfg.url), {
    headers: { Authorization: `Bearer ${cfg.token}`, Accept: "application/json" },
    signal: AbortSignal.timeout(cfg.timeoutMs ?? 10000),
  });
  const text = await res.text();
  let v = null;
  try {
    v = JSON.parse(text);
  } catch {
    // kept null: said below
  }
  if (res.status !== 200 || !Array.isArray(v?.tools)) {
    const why = v?.detail ?? v?.title ?? text.slice(0, 200);
    throw new Error(`AKK's catalogue (GET /v1/tools) answered ${res.status}: ${why}`);
  }
  return v;
}

// schemaShape is what must agree between the catalogue and a registration:
// the argument names and which are required.
function schemaShape(schema) {
  const props = Object.keys(schema?.properties ?? {}).sort();
  const required = [...(schema?.required ?? [])].sort();
  return JSON.stringify({ props, required });
}

// compare lists the differences between the catalogue and what the host
// registered: registered is [{ name, parameters }] with the host's names
// (the catalogue's name after prefix). An empty list means they agree.
export function compare(catalogue, prefix, registered) {
  const want = new Map(catalogue.tools.map((t) => [prefix + t.name, t]));
  const got = new Map(registered.filter((t) => t.name.startsWith(prefix)).map((t) => [t.name, t]));
  const diffs = [];
  for (const [name, tool] of want) {
    const r = got.get(name);
    if (!r) {
      diffs.push(`${name} is in AKK's catalogue but not registered`);
    } else if (r.parameters !== undefined && schemaShape(r.parameters) !== schemaShape(tool.input_schema)) {
      diffs.push(`${name}'s arguments differ from AKK's catalogue`);
    }
  }
  for (const name of got.keys()) {
    if (!want.has(name)) diffs.push(`${name} is registered but not in AKK's catalogue`);
  }
  return diffs;
}

// refusal is the text a connector gives when it refuses to start.
export function refusal(catalogue, diffs) {
  return `AKK connector refused to start: what the host registered differs from AKK's catalogue ${catalogue.catalogue_version} (${catalogue.tools.length} tools): ${diffs.join("; ")}`;
}
