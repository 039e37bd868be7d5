"""`opscan align`: find the module and the op where two runs of a model part ways.

Pipeline (one module per stage):
  loader   the model-file contract, imported through one function
  stats    per-tensor statistics records (dtype, shape, max, min, mean, L2 norm, NaN/Inf)
  layout   msprobe's statistics dump layout: step{N}/rank{N}/dump.json, construct.json, stack.json
  stats_worker  a step's statistics, encoding and writing in a worker process (numpy only)
  hooks_torch / hooks_paddle   framework-only recorders (module calls, op calls, fault injection)
  runner   `opscan align dump`: same inputs on both sides, dropout off, amp, fp64 reference, steps
  compare  match calls, norm-relative errors, noise floor, first divergence and descent
  localize re-run side A to capture the named op's inputs and write a single-op repro
  coverage join suspects with opscan's classification verdicts
  report   AlignReport -> md, html (tree + loss plot), csv, xlsx, json

The device side (runner + hooks + stats + stats_worker + layout) imports only the framework and this
package (the worker process not even the framework).
"""
