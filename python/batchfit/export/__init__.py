"""PyTorch -> BatchFit model file: tracing, op mapping and measurement helpers.

Used by tools/torch_export.py and tools/torch_measure.py (see tools/README.md).
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
  mapped, write the model file.
"""
