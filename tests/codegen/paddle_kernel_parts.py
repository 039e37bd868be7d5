"""Builders the paddle kernel tests share: a phi kernel from its C++ signature, an aclnn
API from its parameters, and readers of what build_paddle_kernel returns."""
from __future__ import annotations

from codegen.paddle_target import params_from_signature
from opdb.model import AclnnApi, FrameworkOp, Param, Source

SRC = Source("test", "", "", "")
FLOATS = ("float32", "float16", "bfloat16")


def op(name: str, signature: str, kind: str = "forward") -> FrameworkOp:
    return FrameworkOp("paddle", name, SRC, schema=signature,
                       params=params_from_signature(signature), kind=kind)


def api(name: str, *params: Param) -> AclnnApi:
    return AclnnApi(name, params, SRC)


def tensor(name: str, role: str = "input", dtypes=FLOATS) -> Param:
    return Param(name, "aclTensor*" if role == "output" else "const aclTensor*", role, dtypes)


def args_by_name(k: dict) -> dict:
    return {a.aclnn_name: a for a in k["args"]}


def todos(k: dict) -> list[str]:
    return [p.todo for p in k["argmap"].params if p.todo] + [u["todo"] for u in k["unused"]]


def registered_dtypes(cc: str, kernel: str) -> list[str]:
    """The dtype list of `kernel`'s PD_REGISTER_PLUGIN_KERNEL in the rendered `cc`."""
    import re
    m = re.search(r"PD_REGISTER_PLUGIN_KERNEL\(" + kernel + r",.*?custom_kernel::\w+,(.*?)\)",
                  cc, re.S)
    return [d.strip() for d in m.group(1).split(",")]


def registered_in_tree(kernel: str, api: str) -> list[str]:
    """The dtypes opgen registers for `kernel` rendered on `api` (in-tree layout)."""
    from codegen.api import prepare
    from opdb.query import OpDB
    r = prepare(OpDB.open(), api, "paddle", op=kernel, layout="in-tree")
    cc = next(t for p, t in r.files.items() if p.endswith(".cc"))
    return registered_dtypes(cc, kernel)
