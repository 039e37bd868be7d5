"""Test helper: the op set torch_npu 2.13.0 registers NPU kernels for.

Read from the committed op-plugin extraction (`op_plugin_aclnn_map.jsonl`, records built for
v2.13) plus the codegen yaml committed from the torch_npu 2.13.0 wheel
(`opdb/sources/torch_npu/2.13.0/`). Library code gets this set from opdb.
"""
from __future__ import annotations

import functools
import json
import re
from opdb.build import default_sources_dir

REPO_SOURCES = default_sources_dir()

SOURCES = (REPO_SOURCES / "torch/op_plugin_aclnn_map.jsonl")
CODEGEN_YAML = REPO_SOURCES / "torch_npu/2.13.0/npu_native_functions_by_codegen.yaml"


def _name(func: str) -> str:
    return "aten::" + re.match(r"\s*([\w.]+)\s*\(", func).group(1)


@functools.lru_cache(maxsize=1)
def adapted_ops() -> frozenset[str]:
    import yaml

    names: set[str] = set()
    with SOURCES.open() as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("built_for_target") and rec["op"].startswith("aten::"):
                names.add(rec["op"])
    doc = yaml.safe_load(CODEGEN_YAML.read_text(encoding="utf-8"))
    for section in ("supported", "autograd"):
        for e in doc.get(section) or []:
            func = e["func"] if isinstance(e, dict) else e
            if "(" in func:
                names.add(_name(func))
            else:
                names.add("aten::" + func)
    return frozenset(names)
