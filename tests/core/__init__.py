"""Tests of bot/core/."""
