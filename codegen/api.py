"""opgen's library entry points: `render_adapter` (pure: records in, {path: text}
out), `generate` (resolve through opdb, render, write atomically) and
`generate_from_report` (every cann-available gap of an opscan report).

Output layout under `-o DIR`:
  README.md                          mapping table + TODO list
  in-tree/...                        files to drop into PaddleCustomDevice / op-plugin
  standalone/CMakeLists.txt, src/, csrc/ (runtime copy), tests/
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from opdb import fsio
from opdb.errors import OpscanError, ParseError
from opdb.model import AclnnApi, FrameworkOp

from codegen.render import render

LAYOUTS = ("in-tree", "standalone", "both")
TARGETS = ("paddle", "torch")
CSRC_DIR = Path(__file__).resolve().parent.parent / "csrc" / "opgen"
TORCH_NPU_VERSION_MACRO = "V2R13"  # op-plugin CURRENT_VERSION of torch_npu 2.13.0


@dataclass
class Rendered:
    """Everything one adapter renders to (paths relative to the output dir)."""

    target: str
    api: AclnnApi
    op: FrameworkOp
    files: dict[str, str] = field(default_factory=dict)
    todos: list[str] = field(default_factory=list)
    module_name: str = ""


def sanitize(name: str) -> str:
    """A file/identifier-safe name: `aten::add.Tensor` -> aten_add_Tensor."""
    s = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")
    return s or "op"


def _rows(amap, args) -> list[dict]:
    rows = []
    for p, a in zip(amap.params, args):
        fw = f"`{p.fw.name}`" if p.fw else "-"
        if p.fw_input is not None:
            fw = f"`{p.fw_input.name}` -> `{p.fw.name}`"
        if p.rule is not None:
            fw = (", ".join(f"`{f.name}`" for _, f in p.needs) or "-") + \
                f" ({p.rule.evidence})"
        rows.append({"aclnn": p.aclnn.name, "ctype": p.aclnn.ctype, "role": p.aclnn.role,
                     "fw": fw, "decision": p.decision + (" (todo)" if a.todo else "")})
    return rows


def map_args_of(branch, fn):
    """The ArgMap behind one call site (the README's mapping table)."""
    from codegen.argmap import map_args
    from codegen.torch_target import fw_params
    if branch.api.name == fn.argmap.api.name:
        return fn.argmap
    fwp = [f if f.kind != "tensor" or not branch.cond.startswith(f.name + ".")
           else type(f)(f.name, "scalar", "const at::Scalar&") for f in fw_params(fn.schema)]
    return map_args(branch.api, fwp, "torch")


def _test_value(arg) -> str:
    """An example CPU value for a torch schema argument (guessed; the test says so)."""
    k = arg.kind
    if k == "tensor":
        return "None" if arg.optional else "torch.randn(4, 8).to(dt)"
    if k == "tensor_list":
        return "[torch.randn(4, 8).to(dt)]"
    if k in ("scalar", "float"):
        return "None" if arg.optional else "0.5"
    if k == "int":
        return "None" if arg.optional else "1"
    if k == "int_array":
        return "None" if arg.optional else "[1]"
    if k == "bool":
        return "False"
    if k == "dtype":
        return "None" if arg.optional else "dt"
    if k == "string":
        return "None" if arg.optional else "''"
    return "None"


def render_adapter(api: AclnnApi, op: FrameworkOp, target: str, layout: str = "both", *,
                   grad: tuple[AclnnApi, FrameworkOp] | None = None,
                   acl_op_fallback: bool = False, command: str = "",
                   how: tuple[str, str] = ("", ""), alternatives: list[str] | None = None,
                   framework_dtypes: tuple[str, ...] | None = None,
                   family: dict[str, FrameworkOp] | None = None,
                   variants: dict[str, AclnnApi] | None = None,
                   fallbacks: set[str] | None = None, soc: str | None = None) -> Rendered:
    """Render every file for one (aclnn API, framework op). Pure: no I/O, no opdb.
    `soc`: the chip whose aclnn dtypes are registered (paddle) and tested."""
    from opdb.soc import resolve_soc
    from opdb.soc_dtypes import soc_dtypes
    soc = resolve_soc(soc).id
    if target not in TARGETS:
        raise OpscanError(f"unknown target {target!r}", hint="use --target paddle or torch")
    if layout not in LAYOUTS:
        raise OpscanError(f"unknown layout {layout!r}", hint="use in-tree, standalone or both")
    op_id = sanitize(op.name.split("::")[-1])
    # op + API: two APIs adapting one op (aclnnAdd / aclnnInplaceAdd) must not clash
    # when several projects build in one CMake harness
    api_id = sanitize(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", api.name[5:]).lower())
    module_name = f"opgen_{target}_{op_id}__{api_id}"
    project = module_name
    out = Rendered(target, api, op, module_name=module_name)
    common = {"api": api, "op": op, "framework": target, "module_name": module_name,
              "project": project, "op_name": op.name}
    if target == "torch":
        from codegen.torch_target import build_torch_model

        m = build_torch_model(api, op, acl_op_fallback=acl_op_fallback, module_name=module_name,
                              family=family, variants=variants, fallbacks=fallbacks, soc=soc)
        adapter_name = f"{m['file_stem']}KernelNpuOpApi.cpp"
        adapter = render("torch/KernelNpuOpApi.cpp.j2", **m)
        yaml_entry = render("torch/op_plugin_functions.yaml.j2", **m)
        kernels, todos = [], []
        for f in m["functions"]:
            for b in f.branches:
                kernels.append({"api": b.api, "kernel_name": f"{f.op.name} ({f.role})"
                                + (f" if {b.cond}" if b.cond else ""),
                                "rows": _rows(map_args_of(b, f), b.args), "note": ""})
                todos += [a.todo for a in b.args if a.todo]
            todos += [a["todo"] for a in f.allocs if a.get("todo")]
            todos += [u["todo"] for u in f.unused]
        todos = list(dict.fromkeys(todos))
        in_tree = {f"in-tree/op_plugin/ops/opapi/{adapter_name}": adapter,
                   "in-tree/op_plugin/config/op_plugin_functions.yaml.entry": yaml_entry}
        binding = render("torch/binding.cpp.j2", **{**m, "api": m["main_api"]})
        schema = m["schema"]
        main_api = m["main_api"]
        first = next((p.name for p in main_api.params if p.role != "output"
                      and "Tensor" in p.ctype), None)
        tested, cut = soc_dtypes(main_api.name, soc, ["float32", "float16", "bfloat16"], first)
        test_ctx = {"test_args": [_test_value(a) for a in schema.args],
                    "torch_qualname": schema.name,
                    "torch_overload": schema.overload or "default",
                    "test_dtypes": repr(tested or ["float32"])}
        soc_notes = [f"{main_api.name} on {soc}: dtypes cut by {w}" for w in cut]
        standalone_src = {f"standalone/src/{adapter_name}": adapter,
                          "standalone/src/binding.cpp": binding}
        cxx = 17
        extra_readme = {}
    else:
        from codegen.paddle_target import build_paddle_kernel

        ks = [build_paddle_kernel(api, op, framework_dtypes,
                                  (variants or {}).get("versions"), soc,
                                  (variants or {}).get("rank"),
                                  (variants or {}).get("identity"))]
        if grad is not None:
            ks.append(build_paddle_kernel(grad[0], grad[1], framework_dtypes,
                                          (variants or {}).get("grad_versions"), soc,
                                          (variants or {}).get("grad_rank"),
                                          (variants or {}).get("grad_identity")))
        soc_notes = [f"{k['api'].name} on {soc}: dtypes cut by {w}" for k in ks
                     for w in k["soc_cut"]]
        adapter_name = f"{op_id}_kernel.cc"
        needs_dtype_as = any("opgen_dtype_as(" in line
                             for k in ks
                             for a in k["args"] + ((k.get("branch") or {}).get("args") or [])
                             for line in a.prelude)
        needs_compute_as = needs_dtype_as or any(
            k.get("compute_as") or k.get("zeros_as") or k.get("widened")
            or (k.get("branch") or {}).get("compute_as")
            or (k.get("branch") or {}).get("zeros_as") for k in ks)
        adapter = render("paddle/kernel.cc.j2", kernels=ks, needs_compute_as=needs_compute_as,
                         needs_dtype_as=needs_dtype_as,
                         needs_zeros_as=any(k.get("zeros_as") or (k.get("branch") or {})
                                            .get("zeros_as") for k in ks),
                         needs_bits_as=any("opgen_bits_as(" in line
                                           for k in ks
                                           for a in k["args"] + ((k.get("branch") or {})
                                                                 .get("args") or [])
                                           for line in a.prelude),
                         needs_host_scalar=any(k.get("host_scalar") for k in ks),
                         needs_count_nonzero=any(k.get("count_nonzero") for k in ks),
                         includes=sorted({h for k in ks
                                          for h in k["includes"] + (k.get("branch") or {})
                                          .get("includes", [])}))
        kernels = [{"api": k["api"], "kernel_name": k["kernel_name"],
                    "rows": _rows(k["argmap"], k["args"]),
                    # a body of several calls maps no single API's arguments: its comment
                    "note": k["composite"][0].removeprefix("// ") if k["composite"] else ""}
                   for k in ks]
        todos = []
        for k in ks:
            todos += [u["todo"] for u in k["unused"]]
            todos += [k["alloc_todo"]] if k["alloc_todo"] else []
            todos += k["body"]["todos"]
            todos += [a.todo for a in k["args"] if a.todo]
            todos += (k.get("branch") or {}).get("todos", [])
        in_tree = {f"in-tree/backends/npu/kernels/{adapter_name}": adapter}
        module = render("standalone/paddle_module.cpp.j2", kernels=ks, **common)
        standalone_src = {f"standalone/src/{adapter_name}": adapter,
                          "standalone/src/module.cpp": module}
        from codegen.testspec import paddle_spec, spec_text

        specs = [paddle_spec(k["kernel_name"], k["api"].name) for k in ks]
        test_ctx = {"spec_texts": [spec_text(s) for s in specs],
                    "spec_yamls": sorted({s["yaml"] for s in specs if s}),
                    "test_dtypes": repr([d for d in ks[0]["dtype_names"]
                                         if d in ("float32", "float16", "bfloat16")] or ["float32"])}
        cxx = 17
        extra_readme = {"dtype_names": ks[0]["dtype_names"], "compute_as": ks[0]["compute_as"],
                        "widened": ks[0].get("widened") or {},
                        "dtype_key": ks[0].get("dtype_key", "")}
    from opdb.soc import supports
    if supports(api.products, soc) is False:
        soc_notes.insert(0, f"{api.name}'s docs do not list {soc} among its products")
    extra_readme["soc"] = soc
    extra_readme["soc_notes"] = soc_notes
    files: dict[str, str] = {}
    if layout in ("in-tree", "both"):
        files.update(in_tree)
    if layout in ("standalone", "both"):
        files.update(standalone_src)
        files["standalone/CMakeLists.txt"] = render(
            "standalone/CMakeLists.txt.j2", adapter_file=adapter_name, cxx_standard=cxx,
            torch_npu_version_macro=TORCH_NPU_VERSION_MACRO, **common)
        files[f"standalone/tests/test_{op_id}.py"] = render("standalone/test_op.py.j2",
                                                            **common, **test_ctx)
        from codegen.testspec import testlib_file
        lib_name, lib_text = testlib_file(target)
        files[f"standalone/tests/{lib_name}"] = lib_text
        for path in sorted(CSRC_DIR.rglob("*.h")):
            rel = path.relative_to(CSRC_DIR.parent).as_posix()
            files[f"standalone/csrc/{rel}"] = path.read_text()
    readme_files = sorted(files) + ["README.md"]
    files["README.md"] = render(
        "standalone/README.md.j2", command=command or f"opgen aclnn {api.name} --target {target}",
        op_how=how[1] or "the caller", api_how=how[0] or "the caller",
        alternatives=alternatives or [], files=sorted(readme_files), kernels=kernels, todos=todos,
        **extra_readme, **common)
    out.files = dict(sorted(files.items()))
    out.todos = todos
    return out


def write_tree(files: dict[str, str], out_dir: Path, force: bool = False) -> Path:
    """Write `files` under `out_dir` in one step (opdb.fsio.write_tree): built next to the
    destination and renamed into place, with a marker listing what opgen wrote. An existing
    `out_dir` is refused without `force`, and replaced with `force` only if opgen wrote it;
    no path may escape `out_dir`. `build/` (from --build) belongs to the tree."""
    return fsio.write_tree(files, out_dir, force=force, tool="opgen", option="-o/--output",
                           scratch=("build",))


def check_out(out_dir: Path, force: bool) -> Path:
    """Refuse an output directory write_tree would refuse, before rendering anything."""
    return fsio.check_tree(out_dir, force, tool="opgen", option="-o/--output")


def _acl_op_fallback(db, framework: str, op: FrameworkOp) -> bool:
    """Whether op-plugin has an acl_op:: implementation of `op`: a legacy kernel was
    extracted for it, or op-plugin's yaml builds it in the acl_op namespace (the
    `impl_ns(vX.Y)=` note the op-plugin ingest attaches; an acl_op composite such as
    `complex`, which builds its result from other ops, names no kernel of its own).
    The yaml entry then gets its `acl_op` key, so op-plugin's generated wrapper
    (torchnpugen/gen.py) sends internal-format inputs to acl_op instead of refusing them."""
    if framework != "torch":
        return False
    try:
        adapters = db.adapters("torch", op=op.name)
    except Exception:  # an opdb without adapters: no fallback known
        return False
    return any(a.legacy_ops or _builds_acl_op(a.notes) for a in adapters)


def _builds_acl_op(notes) -> bool:
    """An `impl_ns(vX.Y)=acl_op,op_api` note (opdb/ingest/op_plugin.py) lists acl_op."""
    for n in notes or ():
        if n.startswith("impl_ns(") and "=" in n:
            if "acl_op" in n.split("=", 1)[1].split(","):
                return True
    return False


def _rank_variant(db, api: AclnnApi):
    """(API, rank) a paddle kernel calls instead of `api` for inputs of that rank
    (arg_rules.yaml `rank_variants`), when opdb has that API."""
    from opdb.arg_rules import load

    rv = load().rank_variant_for(api.name)
    other = db.aclnn_api(rv.variant) if rv is not None else None
    if other is not None:
        return other, rv.rank
    return _volumetric_sibling(db, api)


_PLANAR = re.compile(r"^(aclnn\w*?)2([dD])(\w*)$")


def _volumetric_sibling(db, api: AclnnApi):
    """(the API's 3-d sibling, 5) for a `...2d`/`...2D` API when opdb has `...3d`/`...3D`
    with the same parameters (names, types, roles): an NC(D)HW input of rank 5 goes to it.
    PaddleCustomDevice grid_sample_kernel.cc (77090b64) sends a 5-d x to
    aclnnGridSampler3D(Backward) and a 4-d one to aclnnGridSampler2D(Backward). Pairs that
    qualify (hicann catalog): AdaptiveAvgPool, AdaptiveMaxPool, CircularPad, GridSampler,
    ReflectionPad, ReplicationPad, each with its Backward; AvgPool, MaxUnpool and
    UpsampleNearest(Exact) take other parameters in 3-d (a `divisorOverride`, a
    `scalesD`) and do not."""
    m = _PLANAR.match(api.name)
    if m is None:
        return None
    other = db.aclnn_api(f"{m.group(1)}3{m.group(2)}{m.group(3)}")
    if other is None:
        return None
    sig = [(p.name, p.ctype, p.role) for p in api.params]
    if sig != [(p.name, p.ctype, p.role) for p in other.params]:
        return None
    return other, 5, (f"rank-5 inputs go to {other.name}, the 3-d sibling with the same "
                      f"parameters (as grid_sample_kernel.cc)")


def _backward_reads(db, op: FrameworkOp, api: AclnnApi) -> dict[int, tuple[AclnnApi, str]]:
    """{fresh result index: (the backward aclnn API, its parameter)} for the results of
    `op` its backward op reads (derivatives.yaml, `torch_facts.backward_reads`): the
    backward op's best op-plugin mappings, `api`'s own backward (`resolve.backward_api`)
    when it is one of several; its parameter named as the backward op's argument."""
    from codegen import torch_facts
    from codegen.argmap import snake
    from codegen.resolve import backward_api
    out = {}
    for i, (bop, arg) in sorted(torch_facts.backward_reads(op.name).items()):
        maps = [m for m in db.mappings("torch", bop) if m.source.source == "op-plugin"]
        top = sorted({m.aclnn for m in maps if m.confidence == max(x.confidence for x in maps)})
        own = backward_api(db, api)
        name = own.name if own is not None and own.name in top else (top[0] if len(top) == 1
                                                                      else None)
        bapi = db.aclnn_api(name) if name else None
        param = next((p.name for p in (bapi.params if bapi else ()) if snake(p.name) == arg), None)
        if param is not None:
            out[i] = (bapi, param)
    return out


def render_context(db, api: AclnnApi, op: FrameworkOp, target: str) -> dict:
    """What opdb adds to one (API, op) for render_adapter: the paddle grad kernel, the
    torch schema family and acl_op fallbacks, and the API's variants."""
    from codegen.resolve import backward_api
    from codegen.variants import family as api_family
    from codegen.variants import paddle_candidates, siblings, versions

    ctx: dict = {"acl_op_fallback": _acl_op_fallback(db, target, op)}
    if target == "torch":
        from codegen.torch_target import schema_family
        fam = schema_family(db, op) if op.schema else {}
        variants = api_family(db, api)
        sibs = siblings(db, variants.get("base", api))
        if sibs:
            variants["siblings"] = sibs
        from codegen.variants import capture_variant
        captures = {a.name: c for a in {api, variants.get("base", api), variants.get("inplace", api)}
                    if (c := capture_variant(db, a)) is not None}
        if captures:
            variants["capture"] = captures  # random APIs: the NPU-graph capture route
        from codegen.variants import weight_nz_variant
        nz = {a.name: n for a in {api, variants.get("base", api)}
              if (n := weight_nz_variant(db, a)) is not None}
        if nz:
            variants["weight_nz"] = nz  # an NZ weight goes to the API's WeightNz sibling
        inplace = (fam or {}).get("inplace")
        if inplace is not None and variants.get("inplace") is None:
            # upstream runs the in-place op on the out-of-place API (out = self):
            # op-plugin ScatterAddKernelNpuOpApi.cpp scatter_add_ -> aclnnScatterAdd
            names = {variants.get("base", api).name} | {v.name for v in variants.get("versions", [])}
            hit = next((m for m in db.mappings("torch", inplace.name)
                        if m.source.source == "op-plugin" and m.aclnn in names), None)
            if hit is not None:
                variants["inplace_out_evidence"] = f"op-plugin {hit.source.path}:{hit.source.line}"
        reads = _backward_reads(db, (fam or {}).get("functional") or op, variants.get("base", api))
        if reads:
            variants["backward_reads"] = reads  # results the paired backward API reads
        from opdb.op_plugin_routes import family_main_routes
        mains = family_main_routes(list(dict.fromkeys(o.name for o in [op, *(fam or {}).values()])))
        if mains:
            variants["main_route"] = mains  # op-plugin's main API, the older one a fallback
        from opdb.arg_rules import load as load_rules
        if load_rules().output_lists_for(api.name):
            if (bw := backward_api(db, api)) is not None:
                variants["backward"] = bw  # named where the lists it reads are dropped
        drop = load_rules().drop_mask_for(api.name)
        if drop is not None:
            # a bit mask upstream generates itself (arg_rules.yaml drop_masks, reviewed)
            variants["drop_mask"] = (drop, db.aclnn_api(drop.mask_api))
        from opdb.op_plugin_routes import mode_route
        modes = {o.name: (r, db.aclnn_api(r.default_api)) for o in [op, *(fam or {}).values()]
                 if (r := mode_route(o.name)) is not None}
        if modes:
            variants["mode_route"] = modes  # op-plugin's default-mode API (IsAclnnOnly switch)
        ctx.update(family=fam or None, variants=variants,
                   fallbacks={o.name for o in fam.values() if _acl_op_fallback(db, target, o)})
        return ctx
    grad = None
    bwd = backward_api(db, api)
    gop = db.framework_op("paddle", op.name + "_grad")
    if bwd is not None and gop is not None:
        grad = (bwd, gop)
    from codegen.paddle_flag_siblings import flag_branch
    from codegen.paddle_grad_identity import grad_identity
    variants = {"versions": paddle_candidates(db, api),
                "rank": _rank_variant(db, api) or flag_branch(db, api, op)}
    from codegen.paddle_composition import forward_composition
    identity = grad_identity(db, api, op) or forward_composition(db, api, op)
    if identity is not None:
        variants["identity"] = identity
    if grad is not None:
        from codegen.paddle_composition import BodyComposition, companion_composition
        if isinstance(identity, BodyComposition):
            variants["grad_identity"] = companion_composition(db, grad[0], grad[1])
        variants["grad_versions"] = versions(db, grad[0])
        variants["grad_rank"] = _rank_variant(db, grad[0]) or flag_branch(db, *grad)
    ctx.update(grad=grad, variants=variants)
    return ctx


def prepare(db, name: str, target: str, op: str | None = None, layout: str = "both",
            pick: int | None = None, command: str = "", soc: str | None = None) -> Rendered:
    """Resolve NAME through opdb and render (no writing)."""
    from codegen.resolve import resolve

    if target not in TARGETS:
        raise OpscanError(f"unknown target {target!r}", hint="use --target paddle or torch")
    res = resolve(db, name, target, op=op, pick=pick)
    ctx = render_context(db, res.api, res.op, target)
    return render_adapter(res.api, res.op, target, layout, command=command,
                          how=(res.how, res.op_how), alternatives=res.alternatives, soc=soc,
                          **ctx)


def generate(db, name: str, target: str, out_dir: Path | None = None, *, op: str | None = None,
             layout: str = "both", force: bool = False, pick: int | None = None,
             command: str = "", soc: str | None = None) -> tuple[Rendered, Path]:
    r = prepare(db, name, target, op=op, layout=layout, pick=pick, command=command, soc=soc)
    if out_dir is None:
        out_dir = Path("opgen-out") / f"{target}_{sanitize(r.op.name.split('::')[-1])}"
    return r, write_tree(r.files, out_dir, force=force)


def report_gaps(path: Path) -> tuple[str, list[tuple[str, str]]]:
    """(framework, [(op, api)]) for every `cann-available` verdict of an opscan report."""
    path = Path(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise OpscanError(f"{path}: no such report", hint="pass the report.json opscan wrote") from None
    except IsADirectoryError:
        raise OpscanError(f"{path}: is a directory", hint="pass the report.json file opscan wrote") from None
    except UnicodeDecodeError:
        raise ParseError(path, None, "not UTF-8 text", hint="pass the report.json opscan wrote") from None
    except json.JSONDecodeError as exc:
        raise ParseError(path, exc.lineno, f"not JSON: {exc.msg}",
                         hint="pass the report.json opscan wrote") from None
    except RecursionError:
        raise ParseError(path, None, "JSON nested too deeply", hint="pass the report.json opscan wrote") from None
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list):
        raise ParseError(path, None, "no `verdicts` list", hint="is this an opscan report.json?")
    framework = data.get("framework", "")
    if framework not in ("", *TARGETS):
        raise ParseError(path, None, f"framework {str(framework)[:40]!r} is neither torch nor paddle",
                         hint="pass a report.json opscan wrote for --framework torch or paddle")
    gaps = []
    for i, v in enumerate(data["verdicts"]):
        if not isinstance(v, dict):
            raise ParseError(path, None, f"verdicts[{i}] is not an object",
                             hint="is this an opscan report.json?")
        if v.get("category") != "cann-available":
            continue
        cands = v.get("candidates") or []
        first = cands[0] if isinstance(cands, list) and cands else None
        if not isinstance(first, dict) or not isinstance(first.get("api"), str) \
                or not isinstance(v.get("op"), str):
            raise ParseError(path, None, f"verdicts[{i}] ({str(v.get('op'))[:60]}) is cann-available "
                                         "but has no op or candidates[].api",
                             hint="regenerate the report with opscan")
        gaps.append((v["op"], first["api"]))
    return framework, gaps


def generate_from_report(db, report: Path, target: str, out_dir: Path, *, layout: str = "both",
                         force: bool = False, soc: str | None = None
                         ) -> list[tuple[Rendered, Path]]:
    """One adapter directory per cann-available gap, under `out_dir`, written as one tree."""
    framework, gaps = report_gaps(report)
    if framework and framework != target:
        raise OpscanError(f"{report} is a {framework} report", hint=f"use --target {framework}")
    files: dict[str, str] = {}
    done = []
    for op_name, api_name in gaps:
        r = prepare(db, api_name, target, op=op_name, layout=layout, soc=soc,
                    command=f"opgen aclnn {api_name} --target {target} --op {op_name}")
        sub = f"{target}_{sanitize(op_name.split('::')[-1])}"
        for rel, text in r.files.items():
            files[f"{sub}/{rel}"] = text
        done.append((r, Path(out_dir) / sub))
    write_tree(files, out_dir, force=force)
    return done
