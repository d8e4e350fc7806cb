"""Tests of bot/playback/."""
