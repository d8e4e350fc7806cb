-- What every process needs of a voice, in the shared store: its trimmed recording (FLAC, the
-- authoritative copy; DATA_DIR keeps a cache) and its model states by model fingerprint (a
-- cache other machines fetch instead of rebuilding). Both go with the voice.
CREATE TABLE voice_recordings (
    voice_id INTEGER PRIMARY KEY REFERENCES voices (id) ON DELETE CASCADE,
    flac BLOB NOT NULL
);

CREATE TABLE voice_states (
    voice_id INTEGER NOT NULL REFERENCES voices (id) ON DELETE CASCADE,
    model_fingerprint TEXT NOT NULL,
    state BLOB NOT NULL,
    PRIMARY KEY (voice_id, model_fingerprint)
);
