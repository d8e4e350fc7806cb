-- The files of voices their members (or the operator) deleted, by the random tag in their
-- names (`voices/<user id>/<tag>.flac`): no owner, no name. A start-up or catch-up sweep
-- deletes the leftover files of such a voice on a machine that missed the deletion, and
-- moves every other file that no voice names aside, never deleting it (a restored or wrong
-- database): see `remove_orphans` in bot/synthesis/voice_library.py.
CREATE TABLE deleted_voice_files (
    tag        TEXT PRIMARY KEY,                  -- 32 hex digits
    deleted_at TEXT NOT NULL
);
