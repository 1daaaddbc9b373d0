-- A Turn holds its endpoint by (endpoint_kind, endpoint_id), no longer by
-- the public id's form: at most one Turn holds each endpoint, and a
-- terminal's or a thread's Turns are read by the pair. Rows written with
-- no endpoint id take it from the public id, as 0014 did.
UPDATE turns SET
  endpoint_kind = CASE WHEN substr(terminal_id, 1, 3) = 'cx_' THEN 'codex_thread' ELSE 'pane' END,
  endpoint_id = CASE WHEN substr(terminal_id, 1, 3) = 'cx_' THEN substr(terminal_id, 4) ELSE terminal_id END
  WHERE endpoint_id = '';
UPDATE watches SET
  endpoint_kind = CASE WHEN substr(terminal_id, 1, 3) = 'cx_' THEN 'codex_thread' ELSE 'pane' END,
  endpoint_id = CASE WHEN substr(terminal_id, 1, 3) = 'cx_' THEN substr(terminal_id, 4) ELSE terminal_id END
  WHERE endpoint_id = '';
DROP INDEX turns_one_holder;
CREATE UNIQUE INDEX turns_one_holder ON turns(endpoint_kind, endpoint_id)
  WHERE state IN ('dispatching', 'working', 'awaiting_approval', 'awaiting_interaction',
                  'waiting_for_host', 'stalled', 'delivery_uncertain', 'response_uncertain');
CREATE INDEX turns_by_endpoint ON turns(endpoint_kind, endpoint_id, created_at);
