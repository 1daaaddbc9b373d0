-- Short-lived private offers: what a controller was shown (a prompt's
-- fingerprint) and may answer, bound to its host and conversation.
CREATE TABLE offers (
  offer_id     TEXT PRIMARY KEY,
  kind         TEXT NOT NULL,            -- 'approval'
  turn_id      TEXT NOT NULL DEFAULT '', -- '' for a terminal-scoped offer
  terminal_id  TEXT NOT NULL,
  host_id      TEXT NOT NULL DEFAULT '', -- '' for the operator
  conversation TEXT NOT NULL DEFAULT '',
  fingerprint  TEXT NOT NULL,
  decisions    TEXT NOT NULL,            -- comma-separated semantic decisions
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  consumed_at  TEXT
);
CREATE INDEX offers_lookup ON offers(terminal_id, turn_id, host_id, conversation, created_at);
-- A fingerprint is answered at most once: the replay fence.
CREATE TABLE consumed_fingerprints (
  fingerprint TEXT PRIMARY KEY,
  consumed_at TEXT NOT NULL
);
