"""``python -m glassgrad explain SCRIPT.py ...`` / ``python -m glassgrad demo``: see glassgrad.cli."""
import sys

from glassgrad.cli import main

if __name__ == "__main__":
    sys.exit(main())
