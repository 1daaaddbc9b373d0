-- A fence is per occurrence of a prompt, not forever per text: each
-- consumed row names the prompt it fences (base) and says when the answer
-- was proven (the prompt left the screen). The next occurrence of the same
-- prompt is fenced under a key of its own.
ALTER TABLE consumed_fingerprints ADD COLUMN base TEXT;
ALTER TABLE consumed_fingerprints ADD COLUMN verified_at TEXT;
UPDATE consumed_fingerprints SET base = fingerprint;
CREATE INDEX consumed_fingerprints_base ON consumed_fingerprints(base) WHERE verified_at IS NOT NULL;
