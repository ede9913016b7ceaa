"""Permission decisions: which calls run, which are refused, and which need a human."""
