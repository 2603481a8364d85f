import sys

from tools.request_path import cli

sys.exit(cli.main())
