"""Tests of bot/i18n/."""
