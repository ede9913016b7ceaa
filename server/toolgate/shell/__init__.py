"""Running a Bash command: nothing here decides whether it may run (that is `toolgate.bash` and the permissions).

    executor.py   one command in /bin/bash: own process group, no stdin, timeout, capped output (output.py)
    host.py       a session's scratch directory and background commands; groups.py stops process groups;
                  watchdog.py stops them when the sidecar dies; pipes.py reads a child's output without blocking

Child environments come from `toolgate.core.child_env` (secrets scrubbed). The sandbox (`toolgate.sandbox`) wraps
these executors; it sits above the permission engine and this package, and neither imports it.
"""
