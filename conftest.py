"""Every test runs as development (``ENV=dev``), and so does every process it starts.

docproc's default is the safe mode, which refuses the development keys that the tests
sign with (``docproc_testing.auth.DEV_AUTH``, docs/security.md); the tests ask for dev
here, once. A test of the safe mode asks for it (``Settings(env="prod")``).
"""

import os

os.environ["ENV"] = "dev"
