"""Traced steps that repeat an earlier step call for call, found once after the trace.

A training loop's steady state repeats itself: with `--steps 4`, steps 3 and 4 of every
bundled example run the same kernels on the same shapes as step 2 (step 1 differs: the
optimizer creates its state). The call graph, its GraphML, the graph summary and the
fallback cost are all proportional to the calls, so each such step cost the report side
as much as a new one. `find_repeats(trace)` recognises the repeating tail of the steps;
`analyzer.graph.build_call_graph(trace, repeats=...)` then lists the template step's calls
once, and the counts and costs computed from that graph (`collapse_by_op`,
`graph_summary`, `analyzer.fallback.compute_fallback`) weight them by the number of steps
they stand for, so every figure in the reports covers every traced step.

When step k *repeats* step j (k > j >= 1): both have the same number of calls and, call by
call in order, the same op, overload, phase, module, source line, aliases, CPU ops, input
and output dtypes and shapes, and the same tensor flow:
  - a tensor read that the step itself produced: the same producing position in the step
    and the same tensor (tensors are numbered by first use within the step);
  - a tensor produced before the step, by the setup phase or an earlier step, with the
    producer described by content (op, overload, phase, module, source, dtypes, and its
    occurrence among the calls of its step with those), the same for both; and, read
    from an earlier step, either from the previous step in both (a parameter its
    optimizer updated) or the very same value in both (a learning-rate tensor the
    optimizer's first step created and every later step reads);
  - a tensor no traced call produced (data, a parameter before its first update).

Only a tail is collapsed: steps j+1..N (N the last traced step) all repeat step j, the
trace is complete (not partial) and no call comes after step N. Why the weighted costs
are exact (analyzer.fallback): a repeated call has the template's op and dtypes, so it
runs on the host exactly when its template does; passthrough (view) calls whose host
placement would depend on a passthrough call of the previous step are the one case the
weights cannot decide, and `compute_fallback` then uses the full graph (`full_graph`).
Inside the collapsed graph the template is the last step (nothing reads its outputs), as
step N is in the full graph; steps j..N-1 also hand some of their values to the next step,
which `next_reads` lists so that those instances count their extra host->device copies.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from analyzer.model import SETUP

_NONE = "-"  # a read no traced call produced


@dataclass(frozen=True)
class StepRepeats:
    """Steps template+1..last repeat step `template` (module docstring)."""

    template: int
    last: int
    # template call index -> the index of the same call in the last step (the listed
    # fallback islands are the last step's, with its call indices)
    last_index: dict = field(repr=False, compare=False)
    # template call index -> ((tensor id, bytes), ...): values it writes that the next
    # step reads (a repeated step's values go the same way to the step after it)
    next_reads: dict = field(repr=False, compare=False)
    full_graph: Callable | None = field(default=None, repr=False, compare=False)
    # step -> (its first call index, its last call index), template and repeated steps
    spans: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def weight(self) -> int:
        """How many traced steps each template call stands for."""
        return self.last - self.template + 1

    def weight_of(self, step: int) -> int:
        return self.weight if step == self.template else 1

    def describe(self) -> str:
        first = self.template + 1
        steps = f"step {first}" if first == self.last else f"steps {first}-{self.last}"
        verb = "repeats" if first == self.last else "repeat"
        return f"{steps} {verb} step {self.template}"

    def listing(self) -> str:
        """The call graph's `repeated_steps` attribute: which calls are not listed and
        which listed node stands for each (the one at the same position in its step)."""
        a, b = self.spans[self.template]
        each = "; ".join(f"step {k}: c{f}..c{e} as c{a}..c{b}"
                         for k, (f, e) in sorted(self.spans.items()) if k != self.template)
        return f"{self.describe()} call for call, not listed ({each})"


def find_repeats(trace) -> StepRepeats | None:
    """The repeating tail of `trace`'s steps, or None (module docstring for the rules)."""
    if trace.partial or not trace.calls:
        return None
    calls = sorted(trace.calls, key=lambda c: c.index)
    last = calls[-1].step
    if last < 2 or last != trace.steps:
        return None
    sigs: dict[int, list] = {}  # step -> its signature, flat (no tensor ids)
    origins: dict[int, list] = {}  # step -> (producer step, index, tensor id) per earlier read
    starts: dict[int, int] = {}  # step -> position of its first call in `calls`
    prev_reads: dict[int, dict] = {}  # step -> {producer index: [TensorMeta]} from step-1
    writer: dict[int, tuple] = {}  # tensor id -> (step, index, position in step, content key)
    ops: dict[int, list] = {}  # step -> its ops in order: only steps with last's are signed
    step = None
    for c in calls:
        if c.step != step:
            if step is not None and c.step < step:
                return None  # steps out of order: nothing is collapsed
            step = c.step
            op_list = ops[step] = []
        op_list.append(c.op)
    step = None
    pos = 0
    occurrences: dict = {}
    local: dict = {}
    app = orig = None
    signed = False
    for i, c in enumerate(calls):
        s = c.step
        if s != step:
            step = s
            starts[s] = i
            signed = s >= 1 and ops[s] == ops[last]
            sig = sigs[s] = []
            app = sig.append
            orig = origins[s] = []
            occurrences, local, pos = {}, {}, 0
        base = (c.op, c.overload, c.phase, c.module, c.source, c.dtypes)
        n = occurrences.get(base, 0)
        occurrences[base] = n + 1
        if not signed:  # only its writers count (a later step may read them)
            key = (*base, n)
            for t in c.outputs:
                writer[t.id] = (s, c.index, pos, key)
            pos += 1
            continue
        # one tuple per call, one per tensor in it: the same facts in the same order as
        # a flat list of them, compared alike, built with fewer calls
        ins = []
        for t in c.inputs:
            tid = t.id
            lt = local.get(tid)
            if lt is None:
                lt = local[tid] = len(local)
            w = writer.get(tid)
            if w is None:
                ins.append((lt, t.dtype, t.shape, _NONE))
            elif w[0] == s:
                # a position in the step (an int; the kinds are strings)
                ins.append((lt, t.dtype, t.shape, w[2]))
            elif w[3][2] == SETUP:
                ins.append((lt, t.dtype, t.shape, w[3]))
            else:
                ins.append((lt, t.dtype, t.shape, w[3]))
                orig.append((w[0], w[1], tid))
                if w[0] == s - 1:
                    prev_reads.setdefault(s, {}).setdefault(w[1], []).append(t)
        outs = []
        for t in c.outputs:
            lt = local.get(t.id)
            if lt is None:
                lt = local[t.id] = len(local)
            outs.append((lt, t.dtype, t.shape))
        app((base, n, c.aliases, c.cpu_ops, tuple(ins), tuple(outs)))
        key = (*base, n)
        for t in c.outputs:
            writer[t.id] = (s, c.index, pos, key)
        pos += 1
    if last - 1 not in sigs:
        return None
    template = last
    want = sigs[last]
    while template - 1 >= 1 and ops.get(template - 1) == ops[last] \
            and sigs.get(template - 1) == want:
        template -= 1
    # a read from an earlier step: both from their previous step, or the same value
    while template < last and not all(_same_origins(origins[template], template, origins[k], k)
                                      for k in range(template + 1, last + 1)):
        template += 1
    if template == last:
        return None
    a, b = starts[template], starts[last]
    count = (starts.get(template + 1, len(calls))) - a
    last_index = {calls[a + p].index: calls[b + p].index for p in range(count)}
    spans = {k: (calls[starts[k]].index, calls[starts[k] + count - 1].index)
             for k in range(template, last + 1)}
    reads = prev_reads.get(template + 1, {})
    next_reads = {n: tuple(dict.fromkeys((t.id, t.nbytes()) for t in v))
                  for n, v in reads.items()}
    return StepRepeats(template=template, last=last, last_index=last_index,
                       next_reads=next_reads, spans=spans)


def _same_origins(tmpl: list, j: int, rep: list, k: int) -> bool:
    """The earlier-step reads of step k (a repeat) and step j (its template), in order:
    each from the previous step in both, or of the very same value (a tensor written once,
    like the learning rate, read by every step)."""
    if len(tmpl) != len(rep):
        return False
    for (pj, ij, tj), (pk, ik, tk) in zip(tmpl, rep):
        if pk == k - 1:
            if pj != j - 1:
                return False
        elif (ik, tk) != (ij, tj):
            return False
    return True
