"""The bubblewrap boundary every Bash command runs under when the sandbox is on (DESIGN §8 "Contain").

    policy.py      pure: working dirs, protected and hidden paths, network rules → a bubblewrap plan
    backend.py     detects bwrap and what the kernel allows; runner.py / resident.py run a command inside
    runtime.py     the session's Sandbox (the SANDBOX dependency): settings → plan → executor hook
    egress.py, proxy.py, forwarder.py   the network boundary (the host policy is `permissions/network.py`)
    placeholders.py, ledger.py           stand-ins for protected files that do not exist yet, and their record

It sits above the permission engine: the ladder learns whether a call is contained through
`toolgate.core.containment.CONTAINMENT`, which the runtime points at the session's sandbox.
"""
