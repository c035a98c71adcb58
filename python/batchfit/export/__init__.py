"""PyTorch -> BatchFit model file: tracing, op mapping and measurement helpers.

``batchfit.export``: used by ``batchfit.estimate(module, example_inputs)``, its command line
``python -m batchfit.export`` (``tools/torch_export.py`` in a clone) and the measurement scripts of
tools/ (see tools/README.md). Importing it needs torch; ``import batchfit`` does not.
Works with torch 1.13 (Debian's python3-torch) and torch 2.x.

Modules:

* ``common``  - loading ``MODULE:CALLABLE`` specs, example inputs, targets and losses;
* ``tracing`` - the intermediate graph (``Node``), torch.fx tracing and the eager
  fallback tracer (module hooks + ``TorchFunctionMode``), both run at batch 1 and 2
  with ``saved_lib.SavedRecorder`` to record shapes and per-node saved bytes;
* ``mapping`` - nodes -> BatchFit layers (the op catalogue of docs/model-format.md): ``Mapper``'s
  driver and dispatch, with its rules in mixins: ``mapper_base`` (helpers), ``module_rules``
  (nn.Module calls, layer builders), ``function_rules`` (torch.* functions, Tensor methods),
  ``shape_rules`` (cat, split, indexing, views); ``values`` (Param, Const, Tup, ...) and
  ``tables`` (which callables each rule covers);
* ``export``  - the driver: trace, map, retrace with coarser leaves for what cannot be
  mapped, write the model file;
* ``saved_lib`` - the saved-tensor counting (``SavedRecorder``), ``dropout`` - CUDA's dropout
  on the CPU (``NativeDropout``), ``__main__`` - the command line.
"""
