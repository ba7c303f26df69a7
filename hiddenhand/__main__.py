import sys

from hiddenhand.cli import main

sys.exit(main())
