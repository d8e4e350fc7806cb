-- A dictionary entry applies to one language (a pocket-tts language name, as the bot offers
-- it) or to all (language NULL); the entries made before apply to all. A word has at most one
-- entry for all languages and one per language: two partial unique indexes, since a NULL
-- cannot be part of a key. SQLite cannot drop a primary key: the table is rebuilt.
CREATE TABLE pronunciations_by_language (
    guild_id INTEGER NOT NULL,
    word_key TEXT    NOT NULL,                    -- casefolded
    word     TEXT    NOT NULL,
    spoken   TEXT    NOT NULL,
    language TEXT                                 -- NULL: every language
);

INSERT INTO pronunciations_by_language (guild_id, word_key, word, spoken, language)
    SELECT guild_id, word_key, word, spoken, NULL FROM pronunciations;
DROP TABLE pronunciations;
ALTER TABLE pronunciations_by_language RENAME TO pronunciations;

CREATE UNIQUE INDEX pronunciations_every_language
    ON pronunciations (guild_id, word_key) WHERE language IS NULL;
CREATE UNIQUE INDEX pronunciations_one_language
    ON pronunciations (guild_id, word_key, language) WHERE language IS NOT NULL;
