#!/usr/bin/python3
"""Export a PyTorch model to a BatchFit model file: the exporter is the batchfit package's (python/batchfit/export,
``python -m batchfit.export`` once installed); this runs it from a clone with nothing installed.

    /usr/bin/python3 tools/torch_export.py MODULE:CALLABLE [--args JSON] --input-shape 3,224,224 --out model.json

``--help`` lists every option.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

from batchfit.export.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
