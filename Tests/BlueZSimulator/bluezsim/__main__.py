"""Entry point: `python -m bluezsim --scenario FILE`."""
import sys

from .cli import main

sys.exit(main())
