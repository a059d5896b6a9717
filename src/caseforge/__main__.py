"""``python -m caseforge``."""

from caseforge.cli import main

main()
