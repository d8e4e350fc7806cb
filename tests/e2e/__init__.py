"""End to end: the real bot against the fake Discord (tests/fakediscord)."""
