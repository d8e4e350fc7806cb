-- PostgreSQL form of 0003 (a server id needs BIGINT).
ALTER TABLE voices ADD COLUMN upload_sha256 TEXT;        -- sha256 of the file as uploaded
ALTER TABLE voices ADD COLUMN consent_guild_id BIGINT;   -- the server /clone was used in (NULL: CLI)
