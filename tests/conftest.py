"""Suite-wide pytest set-up: the skip guard (tests/skipguard.py) that scripts/test.sh arms."""
from tests.skipguard import (pytest_collectreport, pytest_runtest_makereport,  # noqa: F401
                             pytest_sessionfinish, pytest_terminal_summary)
