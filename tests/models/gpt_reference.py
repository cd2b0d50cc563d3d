"""Writes a small random GPT-2 checkpoint in Hugging Face's layout, and PyTorch's outputs for it.

python3 gpt_reference.py OUT_DIR

OUT_DIR/hf/model.safetensors  GPT-2 weights named as Hugging Face's GPT2Model saves them (no
                               "transformer." prefix, the "h.N.attn.bias" mask buffers included,
                               no lm_head: it is tied), float32
OUT_DIR/hf/config.json         n_layer, n_head, n_embd, n_positions, vocab_size
OUT_DIR/reference.safetensors  idx and targets (int32, (2, 12)), PyTorch's logits and mean
                               cross-entropy loss, and the loss's gradients of three weights

The forward pass below is GPT-2's, written out with torch.nn.functional (tanh GELU, LayerNorm eps
1e-5, causal softmax attention), independent of the C++ code it checks. Debian's python3-torch.
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

CFG = dict(vocab_size=300, n_positions=16, n_layer=2, n_head=2, n_embd=32)
DTYPES = {torch.float32: "F32", torch.int32: "I32", torch.uint8: "U8"}


def save(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        data = t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def forward(w, idx):
    C, H = CFG["n_embd"], CFG["n_head"]
    B, T = idx.shape
    x = w["wte.weight"][idx] + w["wpe.weight"][:T]
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    for i in range(CFG["n_layer"]):
        p = f"h.{i}."
        h = F.layer_norm(x, (C,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
        q, k, v = (h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // H)
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = F.layer_norm(x, (C,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
        h = F.gelu(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + h @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = F.layer_norm(x, (C,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
    return x @ w["wte.weight"].T


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "hf"), exist_ok=True)
    torch.manual_seed(7)
    C, V, P = CFG["n_embd"], CFG["vocab_size"], CFG["n_positions"]
    w = {"wte.weight": torch.randn(V, C) * 0.1, "wpe.weight": torch.randn(P, C) * 0.1,
         "ln_f.weight": 1 + 0.1 * torch.randn(C), "ln_f.bias": 0.1 * torch.randn(C)}
    for i in range(CFG["n_layer"]):
        p = f"h.{i}."
        for name, shape in [("ln_1.weight", (C,)), ("ln_1.bias", (C,)), ("attn.c_attn.weight", (C, 3 * C)),
                            ("attn.c_attn.bias", (3 * C,)), ("attn.c_proj.weight", (C, C)),
                            ("attn.c_proj.bias", (C,)), ("ln_2.weight", (C,)), ("ln_2.bias", (C,)),
                            ("mlp.c_fc.weight", (C, 4 * C)), ("mlp.c_fc.bias", (4 * C,)),
                            ("mlp.c_proj.weight", (4 * C, C)), ("mlp.c_proj.bias", (C,))]:
            scale = 0.1 if "weight" in name and "ln" not in name else 0.05
            w[p + name] = (1.0 if "ln" in name and "weight" in name else 0.0) + scale * torch.randn(*shape)
    for t in w.values():
        t.requires_grad_(True)
    files = dict(w)
    for i in range(CFG["n_layer"]):  # the causal-mask buffer older Hugging Face files carry
        files[f"h.{i}.attn.bias"] = torch.ones(1, 1, P, P, dtype=torch.uint8).tril()
    save(os.path.join(out, "hf", "model.safetensors"), files)
    with open(os.path.join(out, "hf", "config.json"), "w") as f:
        json.dump(dict(CFG, model_type="gpt2", n_ctx=P), f)

    idx = torch.randint(0, V, (2, 12), dtype=torch.int64)
    targets = torch.randint(0, V, (2, 12), dtype=torch.int64)
    logits = forward(w, idx)
    loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
    loss.backward()
    save(os.path.join(out, "reference.safetensors"), {
        "idx": idx.to(torch.int32), "targets": targets.to(torch.int32), "logits": logits, "loss": loss.reshape(()),
        "grad.wte.weight": w["wte.weight"].grad, "grad.h.0.attn.c_attn.weight": w["h.0.attn.c_attn.weight"].grad,
        "grad.h.1.mlp.c_fc.bias": w["h.1.mlp.c_fc.bias"].grad, "grad.ln_f.weight": w["ln_f.weight"].grad})


if __name__ == "__main__":
    main()
