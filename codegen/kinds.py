"""Parameter kinds: one vocabulary for aclnn C params, torch schema types and phi
C++ kernel params, so the argument mapper can compare them.

Kinds: tensor, tensor_list, scalar, scalar_list, int_array, bool_array,
float_array, int, float, bool, string, dtype, other.

Also parses torch schema strings (`aten::add.Tensor(Tensor self, ...) -> Tensor`)
into `SchemaArg`/`SchemaReturn` records; opdb stores the schema text and params
but the returns and alias annotations are needed to write the C++ signature.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from opdb.errors import ParseError
from opdb.ingest.cpplex import split_top_level

KINDS = ("tensor", "tensor_list", "scalar", "scalar_list", "int_array", "bool_array",
         "float_array", "int", "float", "bool", "string", "dtype", "other")

_ACLNN_KINDS = {
    "aclTensor*": "tensor", "aclTensorList*": "tensor_list", "aclScalar*": "scalar",
    "aclScalarList*": "scalar_list", "aclIntArray*": "int_array",
    "aclBoolArray*": "bool_array", "aclFloatArray*": "float_array",
    "aclDataType": "dtype", "int64_t": "int", "int32_t": "int", "int": "int",
    "int8_t": "int", "uint64_t": "int", "uint32_t": "int", "double": "float",
    "float": "float", "bool": "bool", "char*": "string",
}


def strip_const(ctype: str) -> str:
    return re.sub(r"\bconst\s+", "", ctype).strip()


def aclnn_kind(ctype: str) -> str:
    """`const aclTensor*` -> tensor, `int64_t` -> int, `char*` -> string."""
    return _ACLNN_KINDS.get(strip_const(ctype), "other")


def aclnn_optional(name: str) -> bool:
    return "Optional" in name or name.endswith("_optional")


# ------------------------------------------------------------------ torch schemas

@dataclass(frozen=True)
class SchemaArg:
    """One argument of a torch schema: `Tensor(a!) self`, `int[1]? dim=None`."""

    name: str
    type: str          # schema type text without alias annotation: `Tensor`, `int[1]?`
    alias: str = ""    # `a!`, `a`, or ""
    default: str | None = None
    kwarg_only: bool = False

    @property
    def mutable(self) -> bool:
        return self.alias.endswith("!")

    @property
    def optional(self) -> bool:
        return self.type.endswith("?")

    @property
    def kind(self) -> str:
        return torch_kind(self.type)


@dataclass(frozen=True)
class SchemaReturn:
    type: str
    alias: str = ""
    name: str = ""


@dataclass(frozen=True)
class TorchSchema:
    name: str        # `aten::add`
    overload: str    # `Tensor`, `out`, ""
    args: tuple[SchemaArg, ...]
    returns: tuple[SchemaReturn, ...]

    @property
    def base(self) -> str:
        return self.name.rpartition("::")[2]


_TYPE_ALIAS = re.compile(r"^(?P<head>[A-Za-z_]+)\((?P<alias>[a-z!]+)\)(?P<tail>.*)$")


def _split_top(text: str) -> list[str]:
    parts = [p.strip() for p in split_top_level(text, "([")]
    return parts[:-1] if parts and not parts[-1] else parts


def _type_alias(type_text: str) -> tuple[str, str]:
    m = _TYPE_ALIAS.match(type_text)
    if m:
        return m["head"] + m["tail"], m["alias"]
    return type_text, ""


def parse_torch_schema(schema: str, where: str = "<schema>") -> TorchSchema:
    """Parse `ns::name.overload(args) -> returns` as torch prints schemas."""
    m = re.match(r"^\s*(?P<name>[\w:]+)(?:\.(?P<ov>\w+))?\((?P<args>.*)\)\s*->\s*(?P<ret>.*)$",
                 schema.strip())
    if not m:
        raise ParseError(where, None, f"not a torch schema: {schema!r}",
                         "expected `aten::name.overload(args) -> returns`")
    name = m["name"] if "::" in m["name"] else f"aten::{m['name']}"
    args: list[SchemaArg] = []
    kwarg_only = False
    for part in _split_top(m["args"]):
        if part == "*":
            kwarg_only = True
            continue
        decl, _, default = part.partition("=")
        type_text, _, arg_name = decl.strip().rpartition(" ")
        if not type_text:
            raise ParseError(where, None, f"cannot parse schema argument {part!r}")
        t, alias = _type_alias(type_text.strip())
        args.append(SchemaArg(arg_name, t, alias, default.strip() or None if default else None,
                              kwarg_only))
    ret_text = m["ret"].strip()
    if ret_text.startswith("(") and ret_text.endswith(")"):
        ret_parts = _split_top(ret_text[1:-1])
    else:
        ret_parts = [ret_text] if ret_text else []
    returns = []
    for part in ret_parts:
        type_text, _, rname = part.strip().partition(" ")
        t, alias = _type_alias(type_text)
        returns.append(SchemaReturn(t, alias, rname.strip()))
    return TorchSchema(name, m["ov"] or "", tuple(args), tuple(returns))


def torch_kind(type_text: str) -> str:
    t = type_text.rstrip("?")
    if t == "Tensor":
        return "tensor"
    if t.startswith("Tensor") and t.endswith("]"):
        return "tensor_list"
    if t == "Scalar":
        return "scalar"
    if t.startswith("Scalar["):
        return "scalar_list"
    if t in ("int", "SymInt"):
        return "int"
    if re.match(r"^(int|SymInt)\[\d*\]$", t):
        return "int_array"
    if t == "float":
        return "float"
    if t.startswith("float["):
        return "float_array"
    if t == "bool":
        return "bool"
    if t.startswith("bool["):
        return "bool_array"
    if t == "str":
        return "string"
    if t == "ScalarType":
        return "dtype"
    return "other"


def torch_cpp_type(arg: SchemaArg, ilistref: bool = False) -> str:
    """The C++ parameter type op-plugin (and ATen) use for a schema argument.
    `ilistref`: the op is part of a structured group, so the dispatcher signature
    takes `Tensor[]` as `const at::ITensorListRef&` (torchgen's
    use_ilistref_for_tensor_lists)."""
    t, opt = arg.type.rstrip("?"), arg.optional
    kind = torch_kind(arg.type)
    if kind == "tensor":
        if arg.mutable:
            return "at::Tensor&"
        return "const c10::optional<at::Tensor>&" if opt else "const at::Tensor&"
    if kind == "tensor_list":
        if t.startswith("Tensor?"):
            return "const c10::List<c10::optional<at::Tensor>>&"
        if ilistref and t == "Tensor[]" and not opt:
            return "const at::ITensorListRef&"
        return "at::TensorList"
    if kind == "scalar":
        return "const c10::optional<at::Scalar>&" if opt else "const at::Scalar&"
    if kind == "scalar_list":
        return "at::ArrayRef<at::Scalar>"
    if kind == "int":
        return "c10::optional<int64_t>" if opt else "int64_t"
    if kind == "int_array":
        return "at::OptionalIntArrayRef" if opt else "at::IntArrayRef"
    if kind == "float":
        return "c10::optional<double>" if opt else "double"
    if kind == "float_array":
        return "c10::optional<at::ArrayRef<double>>" if opt else "at::ArrayRef<double>"
    if kind == "bool":
        return "c10::optional<bool>" if opt else "bool"
    if kind == "bool_array":
        n = re.search(r"\[(\d+)\]", t)
        return f"::std::array<bool, {n.group(1)}>" if n else "at::ArrayRef<bool>"
    if kind == "string":
        return "c10::optional<c10::string_view>" if opt else "c10::string_view"
    if kind == "dtype":
        return "c10::optional<at::ScalarType>" if opt else "at::ScalarType"
    simple = {"Generator": "c10::optional<at::Generator>", "Layout": "c10::optional<at::Layout>",
              "Device": "c10::optional<at::Device>",
              "MemoryFormat": "c10::optional<at::MemoryFormat>"}
    if t in simple:
        return simple[t]
    return f"/* unsupported schema type {arg.type} */ const c10::IValue&"


# ------------------------------------------------------------------ phi C++ params

def paddle_kind(ctype: str) -> tuple[str, bool, bool]:
    """(kind, optional, is_output) of a phi kernel parameter type."""
    c = ctype.replace(" ", "")
    optional = "optional<" in c
    if "DenseTensor" in c or "SelectedRows" in c:
        is_list = "vector<" in c
        is_out = c.endswith("*") and not c.startswith("const") and not is_list
        if is_list:
            is_out = "vector<phi::DenseTensor*>" in c and not c.startswith("const")
        return ("tensor_list" if is_list else "tensor"), optional, is_out
    if "Scalar" in c and "vector" in c:
        return "scalar_list", optional, False
    if "Scalar" in c:
        return "scalar", optional, False
    if "IntArray" in c or re.search(r"vector<(int|int64_t|int32_t)>", c):
        return "int_array", optional, False
    if re.search(r"vector<(float|double)>", c):
        return "float_array", optional, False
    if "vector<bool>" in c:
        return "bool_array", optional, False
    if "string" in c:
        return "string", optional, False
    if "DataType" in c:
        return "dtype", optional, False
    base = re.sub(r"^const|[&*]$", "", c)
    base = base.replace("paddle::optional<", "").rstrip(">")
    if base in ("int", "int64_t", "int32_t", "int8_t", "size_t"):
        return "int", optional, False
    if base in ("float", "double"):
        return "float", optional, False
    if base == "bool":
        return "bool", optional, False
    return "other", optional, False
