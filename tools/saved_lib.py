"""The saved-tensor counting rules (unique storages, parameters excluded) now live in the batchfit package's
exporter, python/batchfit/export/saved_lib.py; the measurement scripts of tools/ import them from here."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from batchfit.export.saved_lib import *  # noqa: E402,F401,F403
