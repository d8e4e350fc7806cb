-- PostgreSQL form of 0011 (BIGINT ids; a regular expression for SQLite's GLOB).
CREATE TABLE read_channels (
    guild_id         BIGINT NOT NULL,
    channel_id       BIGINT NOT NULL,
    voice_channel_id BIGINT,
    PRIMARY KEY (guild_id, channel_id)
);

INSERT INTO read_channels (guild_id, channel_id)
    SELECT guild_id, CAST(value AS BIGINT) FROM server_settings
    WHERE key = 'read_channel' AND value ~ '^[1-9][0-9]{0,18}$';
DELETE FROM server_settings WHERE key = 'read_channel';
