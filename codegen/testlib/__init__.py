"""Runtime helpers of opgen's generated single-op tests, copied verbatim into each
standalone project's `tests/` (like csrc/opgen is copied into `csrc/`): inputs,
CPU reference and tolerance. They import only the framework, so the parts that need
no NPU (sample generation, reference, comparison) are tested here on the CPU."""
