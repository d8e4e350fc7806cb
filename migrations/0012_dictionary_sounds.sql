-- Sounds in the dictionary (/dict sound): a short clip played in place of a whole word. The
-- audio is kept as it plays: 48 kHz mono signed 16-bit little-endian PCM (at most 3 s, so
-- 288 KB), resampled once when stored; its sha256 names it.
CREATE TABLE dictionary_sounds (
    guild_id   INTEGER NOT NULL,
    word_key   TEXT    NOT NULL,                  -- casefolded
    word       TEXT    NOT NULL,
    pcm        BLOB    NOT NULL,
    sha256     TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    PRIMARY KEY (guild_id, word_key)
);
