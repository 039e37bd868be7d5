"""SoC (chip) names and the product names aclnn docs mark per API.

`--soc` takes a chip id (`ascend910b`, the Atlas A2 training series, is the default)
or an alias. A product string from the docs (`Atlas A2 训练系列产品/Atlas A2 推理系列产品`)
maps to the chips it names; an API supports a chip when any of its products does.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from opdb.errors import OpscanError

DEFAULT_SOC = "ascend910b"


@dataclass(frozen=True)
class Soc:
    id: str
    title: str
    aliases: tuple[str, ...]
    markers: tuple[str, ...]  # substrings of doc product names that mean this chip


SOCS: tuple[Soc, ...] = (
    Soc("ascend910b", "Atlas A2 training/inference series (Ascend 910B)",
        ("a2", "910b", "atlas-a2"), ("AtlasA2", "A200IA2", "Atlas800IA2", "ascend910b")),
    Soc("ascend910_93", "Atlas A3 training/inference series (Ascend 910_93)",
        ("a3", "910_93", "atlas-a3"), ("AtlasA3",)),
    Soc("ascend950", "Ascend 950PR/950DT", ("950", "950pr", "950dt"), ("950",)),
    Soc("ascend910", "Atlas training series (Ascend 910)", ("910", "training"),
        ("Atlas训练系列",)),
    Soc("ascend310p", "Atlas inference series (Ascend 310P)", ("310p", "inference"),
        ("Atlas推理系列", "Atlas310P")),
    Soc("ascend310b", "Atlas 200I/500 A2 inference (Ascend 310B)", ("310b",),
        ("Atlas200I/500A2",)),
)
_BY_NAME = {s.id: s for s in SOCS} | {a: s for s in SOCS for a in s.aliases}


class UnknownSoc(OpscanError, ValueError):
    """`--soc` names no chip opdb knows."""


def resolve_soc(name: str | None) -> Soc:
    """The Soc for an id or alias (case-insensitive); DEFAULT_SOC when None."""
    key = (DEFAULT_SOC if name is None else name).strip().lower()  # "" is a typo, not the default
    if key not in _BY_NAME:
        known = ", ".join(s.id for s in SOCS)
        raise UnknownSoc(f"unknown SoC {str(name)[:60]!r} for --soc", hint=f"use one of {known}")
    return _BY_NAME[key]


def product_socs(product: str) -> set[str]:
    """Chips a doc product string names (one string may name several)."""
    return set(_product_socs(product))


@functools.lru_cache(maxsize=256)  # a few dozen distinct strings across all the docs
def _product_socs(product: str) -> frozenset[str]:
    text = "".join(product.split())
    out = set()
    if "Atlas200I/500A2" in text:  # its "/" is not a product separator
        out.add("ascend310b")
        text = text.replace("Atlas200I/500A2", "")
    for part in text.split("/"):
        for soc in SOCS:
            if any(m in part for m in soc.markers):
                out.add(soc.id)
    return frozenset(out)


def supports(products: tuple[str, ...] | None, soc: str) -> bool | None:
    """True/False when the API's products say; None when they are unknown."""
    if products is None:
        return None
    return any(soc in _product_socs(p) for p in products)
