-- A removed host: its token no longer authenticates and it gets no more
-- webhooks; its records stay for the operator.
ALTER TABLE hosts ADD COLUMN deleted_at TEXT;
