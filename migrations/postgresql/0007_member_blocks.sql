-- PostgreSQL form of 0007 (BIGINT ids).
-- Members a server's moderators stopped the bot speaking for (/block): never read, and no
-- /say, /tts, /clone or "Speak this message" there. `told_at` is when the member was told,
-- privately, on their first try (NULL: not yet), so they are told once per block, across
-- restarts and processes; /unblock deletes the row, and a new block tells again.
CREATE TABLE member_blocks (
    guild_id     BIGINT  NOT NULL,
    user_id      BIGINT  NOT NULL,
    moderator_id BIGINT  NOT NULL,
    reason       TEXT,                            -- at most 200 characters (the service's)
    blocked_at   TEXT    NOT NULL,
    told_at      TEXT,
    PRIMARY KEY (guild_id, user_id)
);
