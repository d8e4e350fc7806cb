-- PostgreSQL form of 0008: the key becomes two partial unique indexes in place (a NULL
-- language, every language, cannot be part of a primary key); the entries made before apply
-- to all languages.
ALTER TABLE pronunciations DROP CONSTRAINT pronunciations_pkey;
ALTER TABLE pronunciations ADD COLUMN language TEXT;    -- NULL: every language

CREATE UNIQUE INDEX pronunciations_every_language
    ON pronunciations (guild_id, word_key) WHERE language IS NULL;
CREATE UNIQUE INDEX pronunciations_one_language
    ON pronunciations (guild_id, word_key, language) WHERE language IS NOT NULL;
