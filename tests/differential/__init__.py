"""The differential harness (issue 27 §5): does a command the classifier calls read-only really only read?

`models` reads each program's option model out of the classifier's own tables (and the program's real options
from its help), `generate` spells those options every way the programs accept them and mutates the everyday
corpus, `trace` turns strace's log into the files a command wrote and the programs it ran, and `runner` runs
each command the classifier calls read-only under real bash, bwrap and strace in a throwaway copy of a small git
repository. A finding is a read-only verdict whose command wrote a file or ran a program outside its table.

`make test` runs a bounded sample with a fixed seed (test_sample.py); `make fuzz` runs a long one
(`python -m tests.differential`, bounded by TOOLGATE_DIFF_COUNT and TOOLGATE_DIFF_SECONDS). Every finding becomes
a case in tests/unit/bash/test_differential_findings.py.
"""
