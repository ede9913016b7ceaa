from __future__ import annotations

from toolgate.cli import main

raise SystemExit(main())
