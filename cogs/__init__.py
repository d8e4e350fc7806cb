"""discord.py extensions: thin glue from slash commands and events to `bot/`."""
