"""A Discord message -> the words to say (`words`), and what is said per language
(`phrasebook`). No discord, no model."""
