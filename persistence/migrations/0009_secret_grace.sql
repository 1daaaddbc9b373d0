-- After a rotation the previous webhook secret also signs deliveries for a
-- grace period, so a receiver can switch over without dropping any.
ALTER TABLE hosts ADD COLUMN previous_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE hosts ADD COLUMN previous_secret_until TEXT;
