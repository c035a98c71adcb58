"""The compiled core, imported on first use: ``import batchfit`` works without it (tools/ use the exporter from a
clone, where nothing is compiled), and a missing build says how to make one."""
_module = None


def native():
    """The ``batchfit._batchfit`` extension module."""
    global _module
    if _module is None:
        try:
            from . import _batchfit
        except ImportError as exc:
            raise ImportError(
                "batchfit's compiled core (batchfit._batchfit) is not built: `pip install .` from a clone of "
                "BatchFit builds it, or put a build tree's python/ folder on PYTHONPATH "
                f"(cmake --build build makes build/python/batchfit) ({exc})") from exc
        _module = _batchfit
    return _module
