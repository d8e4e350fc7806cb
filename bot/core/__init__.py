"""The floor everything stands on: the operator's config, the error base, task supervision,
atomic private files and the process's tunings (garbage collector pauses, native memory).
No discord, no model."""
