-- Every Send has a Watch: a Send's Watch names its Turn and follows it
-- (no monitor or callbacks of its own). A Turn says how it was delivered.
ALTER TABLE watches ADD COLUMN turn_id TEXT NOT NULL DEFAULT '';
CREATE INDEX watches_turn ON watches(turn_id) WHERE turn_id <> '';
ALTER TABLE turns ADD COLUMN delivery_path TEXT NOT NULL DEFAULT 'managed';
-- A Turn's public progress: its latest actions (JSON) and the agent's
-- timestamp of its newest item.
ALTER TABLE turns ADD COLUMN progress_actions TEXT NOT NULL DEFAULT '';
ALTER TABLE turns ADD COLUMN latest_item_at TEXT;
