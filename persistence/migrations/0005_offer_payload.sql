-- The private mapping of an interaction offer (public ids -> profile keys).
ALTER TABLE offers ADD COLUMN payload TEXT NOT NULL DEFAULT '';
ALTER TABLE offers ADD COLUMN public_id TEXT NOT NULL DEFAULT '';
