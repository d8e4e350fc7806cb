-- The consent record of a cloned voice: what exactly was uploaded, where, and when.
ALTER TABLE voices ADD COLUMN upload_sha256 TEXT;        -- sha256 of the file as uploaded
ALTER TABLE voices ADD COLUMN consent_guild_id INTEGER;  -- the server /clone was used in (NULL: CLI)
