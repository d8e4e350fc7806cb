-- A member's own speaking rate in a server (NULL: the server's). The server's rate is the
-- `speaking_rate` key of server_settings (key/value rows), so it needs no column.
ALTER TABLE member_settings ADD COLUMN rate DOUBLE PRECISION;
