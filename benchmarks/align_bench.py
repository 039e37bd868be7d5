"""What the align overhead benchmarks that measure the dumped step in layers share
(align_overhead_instructions.py, align_step_resources.py): a model's CPU session with its
module-level recorder, as `opscan align dump` makes it, and the recorder's torch hooks as
stubs that return at once (the cost of torch calling the hooks, nothing else)."""
from __future__ import annotations

from pathlib import Path


def cpu_session(framework: str, model: Path):
    """(entry, session, recorder): the model loaded and seeded, dropout off, the
    module-level recorder made (and installed)."""
    from analyzer.align.loader import load_model
    from analyzer.align.runner import _seed, _session

    _seed(framework, 0)
    entry = load_model(model, framework)
    s = _session(entry, framework, "cpu")
    s.disable_dropout()
    return entry, s, s.recorder("module", (), None)


def install_stub_hooks(model) -> list:
    """Hooks of the recorder's kinds on every submodule and parameter of a torch `model`,
    each returning at once; their handles."""
    handles = []
    for mod in model.modules():
        if mod is model:
            continue
        handles.append(mod.register_forward_pre_hook(lambda m, a, k: None, with_kwargs=True))
        handles.append(mod.register_forward_hook(lambda m, a, k, o: None, with_kwargs=True))
        for p in mod.parameters(recurse=False):
            if p.requires_grad:
                handles.append(p.register_post_accumulate_grad_hook(lambda p: None))
    return handles
