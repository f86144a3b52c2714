"""MultiheadAttention, F.multi_head_attention_forward and the Transformer modules against
PyTorch: parameters drawn from torch's generator, values and gradients (masks, batch_first,
unbatched input, kdim/vdim, add_bias_kv, add_zero_attn, need_weights, per-head weights),
train mode with dropout drawing torch's stream, reprs, state_dict keys, warnings and errors."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import torch

from tests.oracle import close, same


def _data(shape: tuple[int, ...], seed: int = 0, dtype: str = "float32") -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _grads(module: Any) -> list:
    return [p.grad for p in module.parameters()]


# -- MultiheadAttention ---------------------------------------------------------------------------

MHA_CASES = [
    ({}, {}),
    ({"batch_first": True}, {}),
    ({"bias": False}, {}),
    ({"add_bias_kv": True}, {}),
    ({"add_zero_attn": True}, {}),
    ({"add_bias_kv": True, "add_zero_attn": True}, {"attn_mask": "bool2d"}),
    ({}, {"need_weights": False}),
    ({}, {"average_attn_weights": False}),
    ({}, {"attn_mask": "bool2d"}),
    ({}, {"attn_mask": "float3d"}),
    ({}, {"key_padding_mask": "bool"}),
    ({}, {"key_padding_mask": "bool", "attn_mask": "bool2d", "need_weights": False}),
    ({}, {"attn_mask": "causal", "is_causal": True, "need_weights": False}),
    ({"batch_first": True}, {"key_padding_mask": "float", "attn_mask": "float3d"}),
]


def _mask(lib: Any, kind: str | None, batch: int, heads: int, target: int,
          source: int) -> Any:
    if kind is None:
        return None
    if kind == "causal":
        return lib.nn.Transformer.generate_square_subsequent_mask(target)
    if kind == "bool2d":
        return lib.tensor(np.triu(np.ones((target, source), dtype=bool), 2))
    if kind == "float3d":
        return lib.tensor(_data((batch * heads, target, source), 9))
    padding = np.zeros((batch, source), dtype=bool)
    padding[0, -2:] = True
    if kind == "bool":
        return lib.tensor(padding)
    return lib.tensor(np.where(padding, -1e4, 0.0).astype("float32"))


@pytest.mark.parametrize(("options", "call"), MHA_CASES,
                         ids=[f"{o}-{c}" for o, c in MHA_CASES])
@pytest.mark.parametrize("self_attention", [True, False])
def test_multihead_attention_values_and_gradients(options: dict, call: dict,
                                                  self_attention: bool) -> None:
    batch, heads, target, source, embed = 2, 2, 4, 5, 8
    if self_attention:
        source = target
    call = dict(call)
    kinds = {name: call.pop(name, None) for name in ("attn_mask", "key_padding_mask")}
    batch_first = options.get("batch_first", False)

    def layout(length: int, seed: int) -> np.ndarray:
        shape = (batch, length, embed) if batch_first else (length, batch, embed)
        return _data(shape, seed)

    q_data, kv_data = layout(target, 1), layout(source, 2)

    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.MultiheadAttention(embed, heads, **options)
        query = lib.tensor(q_data, requires_grad=True)
        key = query if self_attention else lib.tensor(kv_data, requires_grad=True)
        masks = {name: _mask(lib, kind, batch, heads, target, source)
                 for name, kind in kinds.items()}
        output, weights = module(query, key, key, **masks, **call)
        loss = output.pow(2).sum() + (0 if weights is None else weights.pow(2).sum())
        loss.backward()
        return [output, weights, query.grad, key.grad, *_grads(module)]

    close(program, rtol=1e-4, atol=1e-5)


def test_multihead_attention_with_kdim_and_vdim_unbatched_and_in_float64() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(3)
        module = lib.nn.MultiheadAttention(6, 3, kdim=4, vdim=5, dtype=lib.float64)
        query = lib.tensor(_data((3, 6), 1, "float64"), requires_grad=True)
        key = lib.tensor(_data((7, 4), 2, "float64"), requires_grad=True)
        value = lib.tensor(_data((7, 5), 3, "float64"), requires_grad=True)
        padding = lib.tensor(np.array([False] * 5 + [True] * 2))
        output, weights = module(query, key, value, key_padding_mask=padding,
                                 average_attn_weights=False)
        (output.sum() + weights[:, :, 0].sum()).backward()
        return [output, weights, query.grad, key.grad, value.grad, *_grads(module),
                [name for name, _ in module.named_parameters()]]

    close(program, rtol=1e-10, atol=1e-12)


def test_multihead_attention_dropout_in_training_draws_torch_s_numbers() -> None:
    x = _data((4, 2, 8), 5)

    def program(lib: Any) -> list:
        lib.manual_seed(7)
        module = lib.nn.MultiheadAttention(8, 2, dropout=0.4)
        query = lib.tensor(x, requires_grad=True)
        with_weights = module(query, query, query)
        without = module(query, query, query, need_weights=False)[0]
        module.eval()
        evaluated = module(query, query, query)[0]
        (with_weights[0].sum() + without.sum()).backward()
        return [*with_weights, without, evaluated, query.grad]

    close(program, rtol=1e-5, atol=1e-6)


def test_multihead_attention_repr_state_dict_and_parameters() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        modules = [lib.nn.MultiheadAttention(8, 4),
                   lib.nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True, kdim=3,
                                             vdim=5, batch_first=True, dropout=0.1)]
        return [(repr(m), list(m.state_dict()), m.head_dim, m._qkv_same_embed_dim,
                 m.batch_first, m.dropout, [(n, tuple(p.shape)) for n, p in
                                            m.named_parameters()],
                 [p.detach().numpy().round(6).tolist() for p in m.parameters()])
                for m in modules]

    same(program)


@pytest.mark.parametrize(("attn", "padding"), [(None, None), ("2d", None), (None, "pad"),
                                              ("3d", "pad"), ("2d", "pad")])
def test_multihead_attention_merge_masks(attn: str | None, padding: str | None) -> None:
    def program(lib: Any) -> list:
        module = lib.nn.MultiheadAttention(4, 2, batch_first=True)
        query = lib.zeros(3, 5, 4)
        attn_mask = {None: None, "2d": lib.tensor(_data((5, 5), 1)),
                     "3d": lib.tensor(_data((6, 5, 5), 2))}[attn]
        padding_mask = None if padding is None else lib.tensor(_data((3, 5), 3))
        merged, kind = module.merge_masks(attn_mask, padding_mask, query)
        return [merged, kind]

    close(program)


MHA_ERRORS = [
    "lib.nn.MultiheadAttention(6, 4)",
    "lib.nn.MultiheadAttention(0, 2)",
    "lib.nn.MultiheadAttention(4, -1)",
    "m(lib.zeros(2, 2, 2, 4), lib.zeros(2, 2, 2, 4), lib.zeros(2, 2, 2, 4))",
    "m(lib.zeros(3, 2, 4), lib.zeros(3, 4), lib.zeros(3, 4))",
    "m(lib.zeros(3, 4), lib.zeros(3, 4), lib.zeros(3, 4), key_padding_mask=lib.zeros(1, 3))",
    "m(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),"
    " attn_mask=lib.zeros(3, 3, dtype=lib.int64))",
    "m(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), attn_mask=lib.zeros(2, 3))",
    "m(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), attn_mask=lib.zeros(4, 3, 3))",
    "m(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), attn_mask=lib.zeros(1, 3))",
    "m(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), is_causal=True)",
    "m(lib.zeros(3, 2, 4), lib.zeros(5, 2, 4), lib.zeros(4, 2, 4))",
    "m(lib.zeros(3, 2, 5), lib.zeros(3, 2, 5), lib.zeros(3, 2, 5))",
    "m(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),"
    " key_padding_mask=lib.zeros(2, 3, dtype=lib.bool), attn_mask=lib.zeros(3, 3))",
    "m(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),"
    " key_padding_mask=lib.zeros(2, 4, dtype=lib.bool))",
]


@pytest.mark.parametrize("call", MHA_ERRORS)
def test_multihead_attention_errors_and_warnings_are_torch_s(call: str) -> None:
    def program(lib: Any) -> Any:
        m = lib.nn.MultiheadAttention(4, 2)  # noqa: F841 - read by eval
        out = eval(call)
        return [tuple(t.shape) for t in out if t is not None]

    same(program)


def test_functional_multi_head_attention_forward_with_static_kv_and_separate_weights() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(1)
        q = lib.tensor(_data((3, 2, 4), 1), requires_grad=True)
        k = lib.tensor(_data((5, 2, 4), 2), requires_grad=True)
        w = [lib.randn(4, 4, requires_grad=True) for _ in range(3)]
        bias, out_w, out_b = lib.randn(12), lib.randn(4, 4), lib.randn(4)
        static = lib.randn(4, 6, 2, requires_grad=True)
        F = lib.nn.functional
        first = F.multi_head_attention_forward(
            q, k, k, 4, 2, None, bias, None, None, False, 0.0, out_w, out_b,
            use_separate_proj_weight=True, q_proj_weight=w[0], k_proj_weight=w[1],
            v_proj_weight=w[2], static_k=static, static_v=static * 2)
        second = F.multi_head_attention_forward(
            q, k, k, 4, 2, lib.randn(12, 4), bias, None, None, True, 0.3, out_w, out_b,
            training=False, need_weights=False)
        (first[0].sum() + second[0].sum()).backward()
        return [*first, second[0], q.grad, k.grad, static.grad, *[t.grad for t in w]]

    close(program, rtol=1e-4, atol=1e-5)


# -- the Transformer layers -----------------------------------------------------------------------

LAYER_OPTIONS = [
    {},
    {"norm_first": True},
    {"activation": "gelu", "batch_first": True},
    {"activation": "tanh_callable", "bias": False},
    {"activation": "relu_module", "layer_norm_eps": 1e-3},
]


def _layer_options(lib: Any, options: dict) -> dict:
    options = dict(options)
    if options.get("activation") == "tanh_callable":
        options["activation"] = lib.tanh
    elif options.get("activation") == "relu_module":
        options["activation"] = lib.nn.ReLU()
    return options


@pytest.mark.parametrize("options", LAYER_OPTIONS, ids=[str(o) for o in LAYER_OPTIONS])
@pytest.mark.parametrize("training", [False, True])
def test_encoder_layer(options: dict, training: bool) -> None:
    batch_first = options.get("batch_first", False)
    x = _data((2, 5, 8) if batch_first else (5, 2, 8), 1)
    padding = np.zeros((2, 5), dtype=bool)
    padding[1, -1] = True

    def program(lib: Any) -> list:
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.2,
                                               **_layer_options(lib, options))
        layer.train(training)
        src = lib.tensor(x, requires_grad=True)
        out = layer(src, src_key_padding_mask=lib.tensor(padding))
        causal = layer(src, lib.nn.Transformer.generate_square_subsequent_mask(5),
                       is_causal=True)
        (out.sum() + causal.pow(2).sum()).backward()
        return [out, causal, src.grad, *_grads(layer), layer.activation_relu_or_gelu]

    close(program, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("options", LAYER_OPTIONS, ids=[str(o) for o in LAYER_OPTIONS])
@pytest.mark.parametrize("training", [False, True])
def test_decoder_layer(options: dict, training: bool) -> None:
    batch_first = options.get("batch_first", False)
    tgt_data = _data((2, 4, 8) if batch_first else (4, 2, 8), 1)
    memory_data = _data((2, 6, 8) if batch_first else (6, 2, 8), 2)

    def program(lib: Any) -> list:
        lib.manual_seed(0)
        layer = lib.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.2,
                                               **_layer_options(lib, options))
        layer.train(training)
        tgt = lib.tensor(tgt_data, requires_grad=True)
        memory = lib.tensor(memory_data, requires_grad=True)
        mask = lib.nn.Transformer.generate_square_subsequent_mask(4)
        out = layer(tgt, memory, tgt_mask=mask, tgt_is_causal=True,
                    memory_key_padding_mask=lib.tensor(np.eye(2, 6, dtype=bool)))
        out.pow(2).sum().backward()
        return [out, tgt.grad, memory.grad, *_grads(layer)]

    close(program, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_trains_as_torch(training: bool, batch_first: bool) -> None:
    src_data = _data((3, 5, 8) if batch_first else (5, 3, 8), 1)
    tgt_data = _data((3, 4, 8) if batch_first else (4, 3, 8), 2)

    def program(lib: Any) -> list:
        lib.manual_seed(0)
        model = lib.nn.Transformer(8, 2, 2, 2, 16, dropout=0.1, batch_first=batch_first)
        model.train(training)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.05)
        src, tgt = lib.tensor(src_data), lib.tensor(tgt_data)
        mask = model.generate_square_subsequent_mask(4)
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = model(src, tgt, tgt_mask=mask).pow(2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss)
        return [*losses, *model.parameters()]

    close(program, rtol=1e-4, atol=1e-5)


def test_transformer_eval_with_loaded_state_dict_and_no_grad() -> None:
    """Under no_grad in eval mode torch takes its fused fast paths; gradgen's numbers agree."""
    lib_model = torch.nn.Transformer(8, 4, 1, 1, 16, batch_first=True)
    state = {k: v.numpy() for k, v in lib_model.state_dict().items()}
    src_data, tgt_data = _data((2, 5, 8), 1), _data((2, 3, 8), 2)
    padding = np.zeros((2, 5), dtype=bool)
    padding[1, -2:] = True

    def program(lib: Any) -> list:
        model = lib.nn.Transformer(8, 4, 1, 1, 16, batch_first=True).eval()
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        with lib.no_grad():
            out = model(lib.tensor(src_data), lib.tensor(tgt_data),
                        src_key_padding_mask=lib.tensor(padding),
                        memory_key_padding_mask=lib.tensor(padding))
        return [out]

    close(program, rtol=1e-4, atol=1e-5)


def test_transformer_repr_state_dict_and_shared_initialisation() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        model = lib.nn.Transformer(4, 2, 2, 1, 6, activation="gelu", norm_first=True)
        encoder = lib.nn.TransformerEncoder(
            lib.nn.TransformerEncoderLayer(4, 2, 6, batch_first=True), 2,
            enable_nested_tensor=False)
        layers = encoder.layers
        return [repr(model), list(model.state_dict()), repr(encoder),
                bool((layers[0].linear1.weight == layers[1].linear1.weight).all()),
                layers[0].linear1.weight is layers[1].linear1.weight,
                [p.detach().numpy().round(6).tolist() for p in model.parameters()],
                model.d_model, model.nhead, encoder.use_nested_tensor]

    same(program)


@pytest.mark.parametrize("layer", [
    "lib.nn.TransformerEncoderLayer(4, 2, 6)",
    "lib.nn.TransformerEncoderLayer(4, 2, 6, batch_first=True, norm_first=True)",
    "lib.nn.TransformerEncoderLayer(4, 1, 6, batch_first=True)",
    "lib.nn.TransformerEncoderLayer(4, 2, 6, batch_first=True, activation=lib.tanh)",
    "lib.nn.TransformerEncoderLayer(4, 2, 6, batch_first=True, bias=False)",
    "lib.nn.TransformerEncoderLayer(4, 2, 6, batch_first=True)",
    "lib.nn.Linear(4, 4)",
])
def test_encoder_nested_tensor_warnings(layer: str) -> None:
    def program(lib: Any) -> list:
        encoder = lib.nn.TransformerEncoder(eval(layer), 1)
        return [encoder.use_nested_tensor, encoder.enable_nested_tensor]

    same(program)


TRANSFORMER_ERRORS = [
    "lib.nn.TransformerEncoderLayer(4, 2, activation='tanh')",
    "lib.nn.TransformerDecoderLayer(4, 2, activation='sigmoid')",
    "model(lib.zeros(3, 2, 4), lib.zeros(3, 1, 4))",
    "model(lib.zeros(3, 2, 4), lib.zeros(3, 2, 5))",
    "model(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), src_mask=lib.zeros(3, 3, dtype=lib.int32))",
    "model(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),"
    " src_key_padding_mask=lib.zeros(2, 3, dtype=lib.bool), src_mask=lib.zeros(3, 3))",
    "model.generate_square_subsequent_mask(3, dtype=lib.float64)",
    "lib.nn.Transformer.generate_square_subsequent_mask(4)",
]


@pytest.mark.parametrize("call", TRANSFORMER_ERRORS)
def test_transformer_errors_warnings_and_masks(call: str) -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(0)
        model = lib.nn.Transformer(4, 2, 1, 1, 6, dropout=0.0)  # noqa: F841 - read by eval
        out = eval(call)
        if isinstance(out, lib.Tensor):  # (rounded: the two sum in different orders)
            return str(out.dtype), np.round(out.detach().numpy(), 4).tolist()
        return "made"

    same(program)


@pytest.mark.parametrize("case", ["bool", "float", "float -5", "not left aligned", "with mask",
                                  "training", "grad", "batch second", "mask_check off"])
def test_encoder_inference_path_zeroes_padding_as_torch(case: str) -> None:
    """In eval mode without gradients torch packs a padded batch into a nested tensor:
    padded positions take no part in attention and come out as zeros (before the final
    norm). gradgen gives the same numbers, and where torch does not take that path
    (training, gradients, an attention mask...), the ordinary ones."""
    batch_first = case != "batch second"
    x = _data((2, 5, 8) if batch_first else (5, 2, 8), 1)
    padding = np.zeros((2, 5), dtype=bool)
    padding[1, -2:] = True
    if case in ("not left aligned", "mask_check off"):
        padding[0, 0] = True

    def program(lib: Any) -> list:
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=batch_first)
        encoder = lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8),
                                            enable_nested_tensor=batch_first,
                                            mask_check=case != "mask_check off")
        encoder.train(case == "training")
        with lib.no_grad():
            encoder.norm.bias.fill_(0.5)
        mask = lib.tensor(padding)
        if case.startswith("float"):
            mask = lib.zeros(2, 5).masked_fill(mask, -5.0 if case == "float -5" else -np.inf)
        attention = lib.zeros(5, 5) if case == "with mask" else None
        src = lib.tensor(x, requires_grad=case == "grad")
        if case == "grad":
            out = encoder(src, attention, mask)
        else:
            with lib.no_grad():
                out = encoder(src, attention, mask)
        return [out]

    close(program, rtol=1e-4, atol=1e-5)


def test_encoder_inference_path_warns_once_per_process_as_torch() -> None:
    script = (
        "import warnings, sys\n"
        "warnings.simplefilter('always')\n"
        "lib = __import__(sys.argv[1])\n"
        "layer = lib.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)\n"
        "encoder = lib.nn.TransformerEncoder(layer, 1).eval()\n"
        "padding = lib.tensor([[False, False], [False, True]])\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    with lib.no_grad():\n"
        "        for _ in range(3):\n"
        "            encoder(lib.zeros(2, 2, 4), src_key_padding_mask=padding)\n"
        "print([str(w.message).split(' (Triggered')[0] for w in caught])\n")
    outputs = [subprocess.run([sys.executable, "-c", script, name], capture_output=True,
                              text=True, check=True).stdout for name in ("torch", "runtime")]
    assert outputs[0] == outputs[1]
    assert "nested tensors is in prototype stage" in outputs[0]


@pytest.mark.parametrize("case", ["mha eval no_grad", "mha eval grad", "mha train",
                                  "mha batch second", "encoder layer", "decoder layer",
                                  "encoder layer batch second"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_fully_padded_sequences_as_torch(case: str, need_weights: bool) -> None:
    """A sequence whose every key is padded: torch's fused inference path (eval mode, no
    gradient, batch_first self-attention) gives NaN for it; its other paths give zeros
    (scaled_dot_product_attention) or NaN (the weights path). gradgen gives the same."""
    batch_first = "batch second" not in case
    x = _data((2, 5, 8) if batch_first else (5, 2, 8), 1)
    padding = np.zeros((2, 5), dtype=bool)
    padding[1] = True

    def program(lib: Any) -> list:
        lib.manual_seed(0)
        query = lib.tensor(x)
        mask = lib.tensor(padding)
        if case.startswith("mha"):
            module = lib.nn.MultiheadAttention(8, 2, batch_first=batch_first)
            module.train(case == "mha train")
            call = lambda: module(query, query, query, key_padding_mask=mask,  # noqa: E731
                                  need_weights=need_weights)
        elif case.startswith("encoder"):
            module = lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=batch_first).eval()
            call = lambda: (module(query, src_key_padding_mask=mask),)  # noqa: E731
        else:
            module = lib.nn.TransformerDecoderLayer(8, 2, 16, batch_first=True).eval()
            call = lambda: (module(query, query, tgt_key_padding_mask=mask),)  # noqa: E731
        if case == "mha eval grad":
            results = call()
        else:
            with lib.no_grad():
                results = call()
        return [None if r is None else r.detach().masked_fill(r.isnan(), 123.0)
                for r in results]

    close(program, rtol=1e-4, atol=1e-5)
