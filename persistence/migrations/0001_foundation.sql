-- Hosts, settings, the event log and the webhook outbox.
CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE hosts (
  host_id           TEXT PRIMARY KEY,
  name              TEXT NOT NULL,
  webhook_url       TEXT NOT NULL,
  secret            TEXT NOT NULL,
  token_hash        TEXT NOT NULL UNIQUE,
  created_at        TEXT NOT NULL,
  secret_rotated_at TEXT NOT NULL,
  revision          INTEGER NOT NULL
);

-- AUTOINCREMENT: ids are never reused, so an SSE cursor stays meaningful.
CREATE TABLE events (
  event_id     INTEGER PRIMARY KEY AUTOINCREMENT,
  type         TEXT NOT NULL,
  host_id      TEXT REFERENCES hosts(host_id),
  conversation TEXT NOT NULL DEFAULT '',
  subject      TEXT NOT NULL DEFAULT '',
  data         TEXT NOT NULL,
  created_at   TEXT NOT NULL
);
CREATE INDEX events_by_host ON events(host_id, event_id);

CREATE TABLE notifications (
  notification_id  TEXT PRIMARY KEY,
  event_id         INTEGER NOT NULL REFERENCES events(event_id),
  host_id          TEXT NOT NULL REFERENCES hosts(host_id),
  type             TEXT NOT NULL,
  payload          BLOB NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  created_at       TEXT NOT NULL,
  next_attempt_at  TEXT NOT NULL,
  lease_until      TEXT,
  last_attempt_at  TEXT,
  last_status_code INTEGER,
  last_error       TEXT,
  delivered_at     TEXT,
  revision         INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX notifications_due ON notifications(state, next_attempt_at);
CREATE INDEX notifications_by_host ON notifications(host_id, created_at);

CREATE TABLE notification_attempts (
  attempt_id      INTEGER PRIMARY KEY AUTOINCREMENT,
  notification_id TEXT NOT NULL REFERENCES notifications(notification_id),
  attempted_at    TEXT NOT NULL,
  status_code     INTEGER,
  error           TEXT,
  duration_ms     INTEGER NOT NULL
);
