"""``python -m hf_recogs.train`` (what ``hf-recogs train`` launches under accelerate): the same as train.py."""

import sys

from .run import main

sys.exit(main())
