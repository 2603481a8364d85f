import sys

from tools.benchmark import cli

sys.exit(cli.main())
