-- Each outbox row carries its event's subject (a Turn's or a Watch's id),
-- and the pending rows are indexed by host and subject: a claim finds the
-- head of each subject and each host's lease by an index probe, not by a
-- scan of the host's backlog per row (a backlog of thousands claimed in
-- milliseconds, not seconds).
ALTER TABLE notifications ADD COLUMN subject TEXT NOT NULL DEFAULT '';
UPDATE notifications SET subject = COALESCE((SELECT e.subject FROM events e WHERE e.event_id = notifications.event_id), '');
CREATE INDEX notifications_pending_subject ON notifications(host_id, subject, event_id) WHERE state = 'pending';
CREATE INDEX notifications_pending_lease ON notifications(host_id, lease_until) WHERE state = 'pending';
