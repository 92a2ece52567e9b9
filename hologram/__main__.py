from hologram.cli import main

# Guarded: the eval command's worker processes (spawned) import this module again.
if __name__ == "__main__":
    raise SystemExit(main())
