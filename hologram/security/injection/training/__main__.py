"""python -m hologram.security.injection.training: see `trainer`."""

import sys

from hologram.security.injection.training.trainer import main

sys.exit(main())
