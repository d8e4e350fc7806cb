"""Tests of bot/ops/."""
