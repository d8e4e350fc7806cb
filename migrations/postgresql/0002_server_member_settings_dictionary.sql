-- PostgreSQL form of 0002 (BIGINT ids; to_json for SQLite's json_quote).

CREATE TABLE server_settings (
    guild_id BIGINT NOT NULL,
    key      TEXT   NOT NULL,
    value    TEXT   NOT NULL,                     -- JSON
    PRIMARY KEY (guild_id, key)
);

INSERT INTO server_settings (guild_id, key, value)
    SELECT guild_id, 'cloning', 'false' FROM guild_settings WHERE cloning_enabled = 0;
INSERT INTO server_settings (guild_id, key, value)
    SELECT guild_id, 'default_voice', to_json(default_voice)::text
    FROM guild_settings WHERE default_voice IS NOT NULL;
DROP TABLE guild_settings;

CREATE TABLE member_settings (
    user_id  BIGINT  NOT NULL,
    guild_id BIGINT  NOT NULL,
    nick     TEXT,                                -- how to call them when reading aloud
    autoread INTEGER NOT NULL DEFAULT 1,          -- 0: never read their messages
    PRIMARY KEY (user_id, guild_id)
);

CREATE TABLE pronunciations (
    guild_id BIGINT NOT NULL,
    word_key TEXT   NOT NULL,                     -- casefolded
    word     TEXT   NOT NULL,
    spoken   TEXT   NOT NULL,
    PRIMARY KEY (guild_id, word_key)
);
