"""``python -m netdp``."""

from netdp.run.cli import main

raise SystemExit(main())
