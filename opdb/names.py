"""Name normalization shared by search, mapping derivation and opgen's resolver.

`norm_op("aten::native_layer_norm.default") == "layernorm"`,
`norm_aclnn("aclnnInplaceLayerNormV2") == "layernorm"`: lower case, no namespace,
overload, `native_`/leading and trailing underscores, separators, `Inplace`,
version suffixes. Grad/backward spellings fold to `backward`.
"""
from __future__ import annotations

import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def split_op(name: str) -> tuple[str, str, str]:
    """`aten::add.Tensor` -> ("aten", "add", "Tensor"); `adam` -> ("", "adam", "")."""
    ns, _, rest = name.rpartition("::")
    base, _, overload = rest.partition(".")
    return ns, base, overload


def op_display(ns: str, base: str, overload: str) -> str:
    """opdb's op naming: `aten::x` for the default overload, `aten::x.ov` otherwise."""
    head = f"{ns}::{base}" if ns else base
    return head if overload in ("", "default") else f"{head}.{overload}"


def _fold(words: str) -> str:
    s = words.lower()
    s = re.sub(r"(^|_)(grad|backward)(_|$)", r"\1backward\3", s)
    s = s.replace("_", "").replace("-", "").replace(" ", "")
    return s


def norm_op(name: str) -> str:
    _, base, _ = split_op(name)
    base = base.strip("_")
    if base.startswith("native_"):
        base = base[len("native_"):]
    if base.startswith("npu_"):
        base = base[len("npu_"):]
    return _fold(base)


def norm_aclnn(api: str) -> str:
    s = api[5:] if api.startswith("aclnn") else api
    if s.startswith("Inplace"):
        s = s[len("Inplace"):]
    s = re.sub(r"V\d+$", "", s)
    return _fold(_CAMEL.sub("_", s))


def norm_text(text: str) -> str:
    """Normalize free text the user typed (`Adam`, `layer_norm`, `aclnnAdd`)."""
    text = text.strip()
    if text.startswith("aclnn"):
        return norm_aclnn(text)
    if "::" in text or "_" in text or text.islower():
        return norm_op(text)
    return norm_aclnn("aclnn" + text)


def normalize_op_name(framework: str, name: str) -> str:
    """The one spelling of an op everywhere (trace, graph, verdicts, opdb lookups):
    torch `aten.add.Tensor` / `aten::add.default` / `add.Tensor` -> `aten::add.Tensor` /
    `aten::add`; paddle kernel names are stripped of surrounding blanks only."""
    name = name.strip()
    if framework != "torch":
        return name
    if "::" not in name and name.count(".") >= 1 and name.split(".", 1)[0] in ("aten", "prims", "npu"):
        ns, rest = name.split(".", 1)
        name = f"{ns}::{rest}"
    if "::" not in name:
        name = f"aten::{name}"
    ns, rest = name.split("::", 1)
    base, _, overload = rest.partition(".")
    return op_display(ns, base, overload)
