"""What the bot writes, per locale code ("fr"): replies (`replies`), command descriptions
(`commands`), and `translate` (`tr`, `localize`). No discord: callers pass a locale or its code."""
