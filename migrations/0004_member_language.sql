-- A member's own language in a server (NULL: the server's). The server's language is the
-- `language` key of server_settings (key/value rows), so it needs no column.
ALTER TABLE member_settings ADD COLUMN language TEXT;
