-- A server reads several channels (up to 5; was one: server_settings' `read_channel` key), each
-- with the voice channel it is read into when it has one of its own (NULL: the author's, as
-- before). The channel a server had is moved here, so no server loses it.
CREATE TABLE read_channels (
    guild_id         INTEGER NOT NULL,
    channel_id       INTEGER NOT NULL,
    voice_channel_id INTEGER,
    PRIMARY KEY (guild_id, channel_id)
);

INSERT INTO read_channels (guild_id, channel_id)
    SELECT guild_id, CAST(value AS INTEGER) FROM server_settings
    WHERE key = 'read_channel' AND value GLOB '[1-9]*' AND value NOT GLOB '*[^0-9]*';
DELETE FROM server_settings WHERE key = 'read_channel';
