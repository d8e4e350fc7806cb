-- Voices made by members, who chooses which voice, and per-server settings.

CREATE TABLE voices (
    id                INTEGER PRIMARY KEY,
    owner_id          INTEGER NOT NULL,          -- Discord user id
    name              TEXT    NOT NULL,          -- as the member typed it
    name_key          TEXT    NOT NULL,          -- casefolded, for uniqueness per owner
    model_fingerprint TEXT    NOT NULL,          -- the model the state was made with
    state_path        TEXT    NOT NULL,          -- relative to DATA_DIR
    clip_path         TEXT    NOT NULL,          -- relative to DATA_DIR (trimmed FLAC)
    sha256            TEXT    NOT NULL,          -- of the trimmed clip's samples
    duration_s        REAL    NOT NULL,          -- of the trimmed clip
    state_bytes       INTEGER NOT NULL,
    clip_bytes        INTEGER NOT NULL,
    created_at        TEXT    NOT NULL,          -- ISO 8601, UTC
    consented_at      TEXT    NOT NULL,          -- when the member confirmed it is their voice
    UNIQUE (owner_id, name_key)
);

CREATE TABLE voice_choices (
    user_id      INTEGER NOT NULL,
    guild_id     INTEGER NOT NULL DEFAULT 0,      -- 0: everywhere
    builtin_name TEXT,
    voice_id     INTEGER REFERENCES voices (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, guild_id),
    CHECK ((builtin_name IS NULL) <> (voice_id IS NULL))
);

CREATE TABLE guild_settings (
    guild_id        INTEGER PRIMARY KEY,
    cloning_enabled INTEGER NOT NULL DEFAULT 1,
    default_voice   TEXT                          -- a built-in voice name, or NULL
);
