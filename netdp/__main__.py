"""``python -m netdp``."""

from netdp.cli import main

raise SystemExit(main())
