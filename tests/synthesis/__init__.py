"""Tests of bot/synthesis/."""
