-- Sessions (terminal <-> native thread bindings) and Turns.
CREATE TABLE sessions (
  session_id       TEXT PRIMARY KEY,
  host_id          TEXT REFERENCES hosts(host_id),
  terminal_id      TEXT NOT NULL,
  native_thread_id TEXT NOT NULL DEFAULT '',
  created_at       TEXT NOT NULL,
  revision         INTEGER NOT NULL
);

CREATE TABLE turns (
  turn_id           TEXT PRIMARY KEY,
  host_id           TEXT REFERENCES hosts(host_id),
  conversation      TEXT NOT NULL DEFAULT '',
  session_id        TEXT NOT NULL REFERENCES sessions(session_id),
  terminal_id       TEXT NOT NULL,
  message_id        TEXT,
  request           TEXT NOT NULL,
  state             TEXT NOT NULL,
  submit_stage      TEXT NOT NULL,
  mark              TEXT NOT NULL,
  native_thread_id  TEXT NOT NULL DEFAULT '',
  native_turn_id    TEXT NOT NULL DEFAULT '',
  latest_text       TEXT NOT NULL DEFAULT '',
  final_message     TEXT NOT NULL DEFAULT '',
  failure_reason    TEXT NOT NULL DEFAULT '',
  cancel_requested  INTEGER NOT NULL DEFAULT 0,
  inactivity_ms     INTEGER NOT NULL,
  hard_timeout_ms   INTEGER NOT NULL,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  accepted_at       TEXT,
  last_activity_at  TEXT,
  ended_at          TEXT,
  revision          INTEGER NOT NULL
);
-- One idempotency key per owner ('' is the operator).
CREATE UNIQUE INDEX turns_message_id ON turns(COALESCE(host_id, ''), message_id) WHERE message_id IS NOT NULL;
CREATE INDEX turns_by_terminal ON turns(terminal_id, state);
CREATE INDEX turns_by_host ON turns(host_id, created_at);
CREATE INDEX events_by_subject ON events(subject, event_id);
