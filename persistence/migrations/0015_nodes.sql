-- A fleet: the daemons (nodes) that share one PostgreSQL database, and the
-- node that owns each Turn, each Watch and each webhook lease. A daemon on
-- its own (SQLite) has no row here and owns everything as ''.
CREATE TABLE nodes (
  name                TEXT PRIMARY KEY,
  advertise_url       TEXT NOT NULL,
  version             TEXT NOT NULL,
  started_at          TEXT NOT NULL,
  last_seen           TEXT NOT NULL,
  operator_token_hash TEXT NOT NULL DEFAULT '',
  -- The public ids of the conversations and terminals the node sees, and
  -- their rows as the operator last saw them (shown, without actions,
  -- while the node is unreachable).
  endpoints           TEXT NOT NULL DEFAULT '[]',
  conversations       TEXT NOT NULL DEFAULT '[]'
);
ALTER TABLE turns ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE watches ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE notifications ADD COLUMN lease_node TEXT NOT NULL DEFAULT '';
