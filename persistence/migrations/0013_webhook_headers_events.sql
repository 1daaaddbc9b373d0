-- A host's own delivery headers (a JSON object of name to value, private
-- like its secret) and its event subscription (a JSON array; empty: all).
ALTER TABLE hosts ADD COLUMN webhook_headers TEXT NOT NULL DEFAULT '{}';
ALTER TABLE hosts ADD COLUMN webhook_events TEXT NOT NULL DEFAULT '[]';
