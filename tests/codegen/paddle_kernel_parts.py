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
