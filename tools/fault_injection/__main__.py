import sys

from tools.fault_injection import cli

sys.exit(cli.main())
