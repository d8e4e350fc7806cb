"""Tests of bot/storage/."""
