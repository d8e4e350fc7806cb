-- A member's own pitch in a server, in semitones (NULL: the server's). The server's pitch is
-- the `pitch` key of server_settings (key/value rows), so it needs no column.
ALTER TABLE member_settings ADD COLUMN pitch INTEGER;
