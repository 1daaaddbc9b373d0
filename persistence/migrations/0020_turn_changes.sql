-- What a Turn changed: the file changes its agent's record states, read as
-- the Turn runs, redacted and bounded, in record order.
CREATE TABLE turn_changes (
  turn_id    TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  path       TEXT NOT NULL,
  op         TEXT NOT NULL,
  diff       TEXT NOT NULL,
  truncated  INTEGER NOT NULL DEFAULT 0,
  at         TEXT NOT NULL,
  PRIMARY KEY (turn_id, seq)
);
