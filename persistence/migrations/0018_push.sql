-- Web Push: each browser subscription of a principal ('operator' or a host
-- id), whether its pushes leave out the command, and the dashboard session
-- that made it (signing out there removes it). The VAPID keys and the push
-- cursor are settings.
CREATE TABLE push_subscriptions (
  endpoint     TEXT PRIMARY KEY,
  principal    TEXT NOT NULL,
  p256dh       TEXT NOT NULL,
  auth         TEXT NOT NULL,
  hide_details INTEGER NOT NULL DEFAULT 0,
  ui_session   TEXT NOT NULL DEFAULT '',
  created_at   TEXT NOT NULL
);
CREATE INDEX push_subscriptions_principal ON push_subscriptions(principal);
