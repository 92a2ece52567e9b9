from hologram.cli import main

raise SystemExit(main())
