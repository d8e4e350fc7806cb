"""Tests of bot/text/."""
