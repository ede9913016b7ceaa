"""Permission decisions: which calls run, which are refused, and which need a human.

`decide.py` is the session's policy (hooks, then the ladder in `ladder.py`, then denial tracking);
`edit_rules.py` changes rules (session memory, settings files through `settings.py`); `sources.py` reads every
scope into one rule book. The runtime (`toolgate.runtime.Runtime.check`) explains a call given by name.
"""
