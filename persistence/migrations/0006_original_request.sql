-- The request a Turn was sent with; Request holds the latest dispatch (a respond).
ALTER TABLE turns ADD COLUMN original_request TEXT NOT NULL DEFAULT '';
