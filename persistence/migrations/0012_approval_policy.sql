-- A host's exact-command auto-approval policy (off when absent): its rules
-- as JSON, written whole.
CREATE TABLE approval_policies (
  host_id TEXT PRIMARY KEY,
  rules TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
