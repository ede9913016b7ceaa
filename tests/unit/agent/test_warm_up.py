"""The provider's SDK is imported in the background once the model is configured, not inside the first send."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys, threading
from toolgate.agent.providers import warm_up

started = []
original_start = threading.Thread.start
def start(self):
    started.append(self)
    original_start(self)
threading.Thread.start = start

module = "toolgate.agent.providers.openai"
assert module not in sys.modules and "openai" not in sys.modules
warm_up("openai")
warm_up("openai")  # once per provider
warm_up("no-such-provider")  # nothing to import: make_provider reports it when it matters
print(len(started), started[0].name)
for worker in started:
    worker.join(timeout=120)
print(hasattr(sys.modules[module], "OpenAIProvider"), "openai" in sys.modules)
"""


def test_warm_up_imports_the_sdk_in_one_background_thread() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "warm-up-openai", "True", "True"]
