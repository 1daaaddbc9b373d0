-- One-tap actions on a push: each token (kept as its hash only) answers one
-- Turn's prompt once, as one principal and the conversation its offer was
-- made in, until it expires.
CREATE TABLE action_tokens (
  token_hash   TEXT PRIMARY KEY,
  principal    TEXT NOT NULL,
  conversation TEXT NOT NULL,
  turn_id      TEXT NOT NULL,
  decision     TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  used_at      TEXT,
  created_at   TEXT NOT NULL
);
