"""What each command or event does: speech, voices, settings, autoread, help, replies, the
model fallback, the language choice, and the command translator Discord syncs with."""
