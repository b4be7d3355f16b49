"""Conference channels: a bot in a multi-party call that asks the right people."""
