"""PocketVoice: a self-hosted Discord voice bot speaking with Kyutai's Pocket TTS."""
