"""Models that need no weights or network, built from a library's own definitions.

Each `*_build` returns what a model file's `build()` returns: `(model, inputs, step)` with
`step()` one training step (forward, loss, backward, optimizer step). The zoo
writes a two-line model file that calls one of these, so generated models go through the
same `opscan MODEL.py` contract, tracer and report as any other model.

- `hf_build("llama")`: a transformers architecture from `AutoConfig.for_model(...)`, scaled
  down (2 layers, hidden 64, ...) unless `size="full"` (the config's own defaults; scan those
  in meta mode). The head is the first of causal-LM, masked-LM, seq2seq-LM, image
  classification that the architecture has, so the loss is the architecture's own.
- `timm_build("resnet18")`: `timm.create_model(name, pretrained=False)`.
- `paddle_vision_build("resnet50")`: `paddle.vision.models.<name>()`.
"""
from __future__ import annotations

BATCH = 2
SEQ = 16
IMAGE = 64
# Scaled-down sizes, applied to whichever of these the config has (directly or through its
# attribute_map, e.g. GPT-2's n_embd); lists are shrunk element-wise.
_TINY_INTS = {
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024, "head_dim": 16,
    "d_model": 64, "d_ff": 128, "d_kv": 16, "num_layers": 2, "num_decoder_layers": 2,
    "num_heads": 4, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128,
    "num_experts": 4, "num_local_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 64, "shared_expert_intermediate_size": 128,
    "first_k_dense_replace": 1, "n_routed_experts": 4, "n_shared_experts": 1,
    "kv_lora_rank": 16, "q_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
    "v_head_dim": 16, "embedding_size": 32, "image_size": IMAGE, "num_labels": 10,
    "max_position_embeddings": 128, "max_window_layers": 2,
}
_TINY_LISTS = {"hidden_sizes": (16, 32, 64, 128, 256), "depths": (1, 1, 1, 1, 1),
               "embed_dims": (16, 32, 64, 128), "num_heads_list": (1, 2, 4, 8)}
_HEADS = ("AutoModelForCausalLM", "AutoModelForMaskedLM", "AutoModelForSeq2SeqLM",
          "AutoModelForImageClassification", "AutoModel")


def _shrink(config) -> None:
    names = set(config.to_dict()) | set(getattr(config, "attribute_map", {}) or {})
    for key, value in _TINY_INTS.items():
        if key in names and isinstance(getattr(config, key, None), int):
            setattr(config, key, value)
    for key, values in _TINY_LISTS.items():
        current = getattr(config, key, None)
        if isinstance(current, (list, tuple)) and current:
            setattr(config, key, list(values[:len(current)]) if len(current) <= len(values)
                    else [values[-1]] * len(current))
    vocab = getattr(config, "vocab_size", None)
    for key in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id"):
        cur = getattr(config, key, None)
        if isinstance(vocab, int) and isinstance(cur, int) and cur >= vocab:
            setattr(config, key, vocab - 1)
    if isinstance(getattr(config, "rotary_dim", None), int):
        config.rotary_dim = 8  # partial rotary: at most the tiny head dim (64 / 4 heads)
    # windows/layer types sized per layer must follow the layer count
    layers = getattr(config, "num_hidden_layers", None)
    for key in ("layer_types", "mlp_only_layers"):
        cur = getattr(config, key, None)
        if isinstance(cur, list) and isinstance(layers, int) and len(cur) > layers:
            setattr(config, key, cur[:layers])


def hf_config(model_type: str, size: str = "tiny"):
    from transformers import AutoConfig

    config = AutoConfig.for_model(model_type)
    if size != "full":
        _shrink(config)
    if hasattr(config, "use_cache"):
        config.use_cache = False
    return config


def hf_model(config):
    import transformers

    errors = []
    for head in _HEADS:
        auto = getattr(transformers, head)
        try:
            return auto.from_config(config)
        except ValueError as e:  # the architecture has no such head
            errors.append(f"{head}: {str(e).splitlines()[0]}")
    raise ValueError(f"no trainable head for {config.model_type}: {'; '.join(errors)}")


def _hf_inputs(model, config):
    import torch

    name = getattr(model, "main_input_name", "input_ids")
    if name == "pixel_values":
        channels = getattr(config, "num_channels", 3)
        size = getattr(config, "image_size", IMAGE)
        size = size if isinstance(size, int) else IMAGE
        labels = torch.randint(0, getattr(config, "num_labels", 2), (BATCH,))
        return {"pixel_values": torch.randn(BATCH, channels, size, size), "labels": labels}
    vocab = getattr(config, "vocab_size", 1024) or 1024
    ids = torch.randint(0, vocab, (BATCH, SEQ))
    inputs = {"input_ids": ids, "labels": ids.clone()}
    if getattr(config, "is_encoder_decoder", False):
        inputs["decoder_input_ids"] = ids.clone()
    return inputs


def _loss(out):
    loss = getattr(out, "loss", None)
    if loss is None:
        first = out[0] if isinstance(out, (tuple, list)) else next(iter(out.values()))
        loss = first.float().mean()
    return loss


def torch_train_step(model, inputs):
    """forward (keyword inputs), the model's own loss, backward, AdamW step, zero_grad."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        out = model(**inputs) if isinstance(inputs, dict) else model(*inputs)
        _loss(out).backward()
        opt.step()
        opt.zero_grad()

    return step


def hf_build(model_type: str, size: str = "tiny"):
    config = hf_config(model_type, size)
    model = hf_model(config)
    model.train()
    inputs = _hf_inputs(model, config)
    return model, inputs, torch_train_step(model, inputs)


def timm_build(name: str):
    import timm
    import torch
    import torch.nn.functional as F

    model = timm.create_model(name, pretrained=False, num_classes=10)
    model.train()
    cfg = getattr(model, "pretrained_cfg", {}) or {}
    _, h, w = cfg.get("input_size", (3, 224, 224))
    x = torch.randn(BATCH, 3, min(h, 224), min(w, 224))
    y = torch.randint(0, 10, (BATCH,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step():
        F.cross_entropy(model(x), y).backward()
        opt.step()
        opt.zero_grad()

    return model, (x, y), step


def paddle_vision_build(name: str):
    import paddle
    import paddle.nn.functional as F
    from paddle.vision import models

    ctor = getattr(models, name, None)
    if ctor is None or not callable(ctor):
        raise ValueError(f"paddle.vision.models has no model {name!r}")
    model = ctor(num_classes=10) if "num_classes" in ctor.__code__.co_varnames else ctor()
    model.train()
    x = paddle.randn([BATCH, 3, IMAGE, IMAGE])
    y = paddle.randint(0, 10, [BATCH])
    opt = paddle.optimizer.Momentum(learning_rate=0.1, parameters=model.parameters())

    def step():
        F.cross_entropy(model(x), y).backward()
        opt.step()
        opt.clear_grad()

    return model, (x, y), step


_BUILDERS = {"hf": "hf_build", "timm": "timm_build", "paddle.vision": "paddle_vision_build"}


def model_file_text(kind: str, spec: str) -> str:
    """The model file the zoo scans for a generated entry (`llama`, `llama@full`)."""
    name, _, size = spec.partition("@")
    args = repr(name) + (f", size={size!r}" if kind == "hf" and size else "")
    return (f'"""opscan zoo: {kind}:{spec}, built by analyzer.zoo.generators (no weights)."""\n'
            f"from analyzer.zoo.generators import {_BUILDERS[kind]}\n\n\n"
            f"def build():\n    return {_BUILDERS[kind]}({args})\n")
