-- Watches of tasks a person started.
CREATE TABLE watches (
  watch_id        TEXT PRIMARY KEY,
  host_id         TEXT REFERENCES hosts(host_id),
  conversation    TEXT NOT NULL DEFAULT '',
  terminal_id     TEXT NOT NULL,
  mode            TEXT NOT NULL,
  state           TEXT NOT NULL,
  mark            TEXT NOT NULL,
  native_turn_id  TEXT NOT NULL DEFAULT '',
  final_message   TEXT NOT NULL DEFAULT '',
  latest_text     TEXT NOT NULL DEFAULT '',
  reason          TEXT NOT NULL DEFAULT '',
  seen_activity   INTEGER NOT NULL DEFAULT 0,
  idle_since      TEXT,
  approval_shown  INTEGER NOT NULL DEFAULT 0,
  hard_timeout_ms INTEGER NOT NULL,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  ended_at        TEXT,
  revision        INTEGER NOT NULL
);
CREATE INDEX watches_active ON watches(state);
