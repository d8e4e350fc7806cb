"""The Discord voice side: the connection (join, leave, heal), the per-server speakers, the 48 kHz
Opus audio source, the discord.py voice adapter (`voice_link`) and playback stats."""
