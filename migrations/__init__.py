"""Numbered SQL migrations (NNNN_description.sql), shipped in the wheel as `bot.migrations`."""
