-- A Turn's and a Watch's endpoint in columns of its own: what it is (a
-- pane, a Codex thread) and its id there. terminal_id stays the public id
-- (and the key that one Turn holds a terminal by). Rows written before are
-- read once here from the public id's form.
ALTER TABLE turns ADD COLUMN endpoint_kind TEXT NOT NULL DEFAULT 'pane';
ALTER TABLE turns ADD COLUMN endpoint_id TEXT NOT NULL DEFAULT '';
UPDATE turns SET
  endpoint_kind = CASE WHEN substr(terminal_id, 1, 3) = 'cx_' THEN 'codex_thread' ELSE 'pane' END,
  endpoint_id = CASE WHEN substr(terminal_id, 1, 3) = 'cx_' THEN substr(terminal_id, 4) ELSE terminal_id END;
ALTER TABLE watches ADD COLUMN endpoint_kind TEXT NOT NULL DEFAULT 'pane';
ALTER TABLE watches ADD COLUMN endpoint_id TEXT NOT NULL DEFAULT '';
UPDATE watches SET
  endpoint_kind = CASE WHEN substr(terminal_id, 1, 3) = 'cx_' THEN 'codex_thread' ELSE 'pane' END,
  endpoint_id = CASE WHEN substr(terminal_id, 1, 3) = 'cx_' THEN substr(terminal_id, 4) ELSE terminal_id END;
