#!/usr/bin/env python3
"""Reference values for tests/nn/transformer_test.cpp, computed with PyTorch at test time.

usage: torch_reference.py OUT.safetensors

Seeded inputs and PyTorch's outputs and gradients for scaled dot-product attention, GELU,
nn.MultiheadAttention, clip_grad_norm_, Adam/AdamW with parameter groups and gradient
accumulation, written as one safetensors file (the format by hand: an 8-byte little-endian header
size, the JSON header padded with spaces to a multiple of 8, then the tensors' bytes). ctest runs
this as the fixture nn_torch_reference and hands the path to nn_test in TG_TORCH_REFERENCE.
Without PyTorch it fails (exit 1) with a message: the comparisons must not vanish silently.

Debian 12's python3-torch is 1.13, which has no public F.scaled_dot_product_attention: the
reference there is torch's documented math (softmax(q k^T * scale + bias) v), checked against
torch's own kernel wherever the installed torch has one (the public function, or 1.13's private
F._scaled_dot_product_attention for bool masks and is_causal).
"""
import json
import math
import os
import struct
import sys


def save_safetensors(path, tensors, torch):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        values = t.flatten().tolist()
        if t.dtype == torch.bool:
            code, data = "BOOL", bytes(int(x) for x in values)
        elif t.dtype == torch.float32:
            code, data = "F32", struct.pack(f"<{len(values)}f", *values)
        else:
            raise TypeError(f"{name}: no writer for {t.dtype}")
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"generator": "tests/nn/torch_reference.py", "torch": torch.__version__}
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    tmp = f"{path}.tmp{os.getpid()}"  # renamed over the path: never a partial file there
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        sys.stderr.write(f"torch_reference.py: PyTorch is not importable by {sys.executable} ({e}).\n"
                         "nn_test compares scaled_dot_product_attention, GELU, MultiheadAttention, "
                         "clip_grad_norm and the optimizers' parameter groups against it: install it "
                         "(Debian: apt-get install python3-torch).\n")
        return 1

    torch.manual_seed(0)
    out = {}

    def check(name, got, want, tol=1e-5):
        if not torch.allclose(got, want, rtol=tol, atol=tol):
            raise SystemExit(f"torch_reference.py: {name}: torch's kernel and the reference math differ "
                             f"by {(got - want).abs().max().item()}")

    # ---- scaled dot-product attention ----
    def sdpa_math(q, k, v, mask=None, is_causal=False, scale=None):
        L, S = q.shape[-2], k.shape[-2]
        scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
        scores = q @ k.transpose(-2, -1) * scale
        neg_inf = torch.tensor(float("-inf"))
        if is_causal:
            scores = torch.where(torch.ones(L, S, dtype=torch.bool).tril(), scores, neg_inf)
        if mask is not None:
            scores = torch.where(mask, scores, neg_inf) if mask.dtype == torch.bool else scores + mask
        return torch.softmax(scores, -1) @ v

    def sdpa_kernel(q, k, v, mask, is_causal, scale):
        """torch's own kernel where this torch has one for these arguments, else None."""
        if hasattr(F, "scaled_dot_product_attention") and scale is None:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)
        private = getattr(F, "_scaled_dot_product_attention", None)
        if private is not None and scale is None and (mask is None or mask.dtype == torch.bool):
            return private(q, k, v, mask, 0.0, False, is_causal)[0]
        return None

    def bool_mask(*shape):
        m = torch.rand(*shape) < 0.6
        m[..., 0] = True  # every query attends something (a fully masked row: transformer_test.cpp)
        return m

    float_mask = torch.randn(2, 1, 4, 6)
    float_mask[0, 0, 1, 2] = float("-inf")
    float_mask[1, 0, 3, 0] = float("-inf")
    cases = [  # name, q, k, v shapes, mask, is_causal, scale
        ("causal", (2, 3, 5, 8), (2, 3, 5, 8), (2, 3, 5, 6), None, True, None),
        ("causal_wide", (1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 4), None, True, None),  # L < S
        ("causal_tall", (1, 2, 6, 4), (1, 2, 3, 4), (1, 2, 3, 5), None, True, None),  # L > S
        ("bool_mask", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 5), bool_mask(4, 6), False, None),
        ("bool_mask_batched", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 5), bool_mask(2, 1, 4, 6), False, None),
        ("float_mask", (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8), float_mask, False, None),
        ("scale", (3, 4, 8), (3, 7, 8), (3, 7, 2), None, False, 0.3),
        ("broadcast", (2, 3, 4, 8), (1, 3, 5, 8), (1, 1, 5, 6), None, False, None),
    ]
    for name, qs, ks, vs, mask, is_causal, scale in cases:
        q, k, v = (torch.randn(*s, requires_grad=True) for s in (qs, ks, vs))
        o = sdpa_math(q, k, v, mask, is_causal, scale)
        kernel = sdpa_kernel(q, k, v, mask, is_causal, scale)
        if kernel is not None:
            check(f"sdpa {name}", kernel, o)
        go = torch.randn_like(o)
        dq, dk, dv = torch.autograd.grad((o * go).sum(), [q, k, v])
        p = f"sdpa.{name}."
        out.update({p + "q": q, p + "k": k, p + "v": v, p + "go": go, p + "out": o, p + "dq": dq, p + "dk": dk,
                    p + "dv": dv})
        if mask is not None:
            out[p + "mask"] = mask

    # ---- GELU ----
    x = torch.cat([torch.linspace(-6, 6, 49), torch.randn(31) * 2]).requires_grad_()
    go = torch.randn_like(x)
    out["gelu.x"], out["gelu.go"] = x, go
    for approximate in ("none", "tanh"):
        y = F.gelu(x, approximate=approximate)
        (dx,) = torch.autograd.grad((y * go).sum(), [x])
        out[f"gelu.{approximate}.out"], out[f"gelu.{approximate}.dx"] = y, dx

    # ---- MultiheadAttention (batch_first) ----
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    with torch.no_grad():  # torch initializes the biases to 0: make them matter
        mha.in_proj_bias.uniform_(-0.5, 0.5)
        mha.out_proj.bias.uniform_(-0.5, 0.5)
    params = dict(mha.named_parameters())
    for n, t in params.items():
        out["mha.param." + n] = t
    self_mask = torch.rand(4, 3, 3) < 0.5  # (N * heads, L, S), true = masked out
    self_mask[:, :, 0] = False
    cross_padding = torch.tensor([[False, True, False, False, True], [False, False, False, True, False]])
    self_padding = torch.tensor([[False, False, False, True], [False, False, True, True]])
    mha_cases = [  # name, query/key/value shapes (None: self-attention on the query), attn_mask,
        # key_padding_mask (true = padding)
        ("cross", (2, 3, 8), (2, 5, 8), torch.randn(3, 5), None),
        ("self_bool3d", (2, 3, 8), None, self_mask, None),
        ("self_causal", (2, 4, 8), None, torch.ones(4, 4, dtype=torch.bool).triu(1), None),
        ("cross_padding", (2, 3, 8), (2, 5, 8), torch.randn(3, 5), cross_padding),
        ("self_causal_padding", (2, 4, 8), None, torch.ones(4, 4, dtype=torch.bool).triu(1), self_padding),
    ]
    for name, qs, kvs, mask, kpm in mha_cases:
        query = torch.randn(*qs, requires_grad=True)
        key, value = (query, query) if kvs is None else (torch.randn(*kvs, requires_grad=True) for _ in range(2))
        o, _ = mha(query, key, value, attn_mask=mask, key_padding_mask=kpm, need_weights=False)
        if kpm is not None:
            out[f"mha.{name}.kpm"] = kpm
        go = torch.randn_like(o)
        inputs = {"query": query} if kvs is None else {"query": query, "key": key, "value": value}
        grads = torch.autograd.grad((o * go).sum(), list(inputs.values()) + list(params.values()))
        p = f"mha.{name}."
        out.update({p + n: t for n, t in inputs.items()})
        out.update({p + "go": go, p + "out": o, p + "mask": mask})
        for n, g in zip(list(inputs) + list(params), grads):
            out[p + "d." + n] = g

    # ---- clip_grad_norm_ ----
    g1, g2 = torch.randn(4, 3), torch.randn(5)
    out["clip.g1"], out["clip.g2"] = g1, g2
    for name, max_norm in (("clip", 1.0), ("noclip", 100.0)):
        p1, p2, p3 = torch.zeros(4, 3, requires_grad=True), torch.zeros(5, requires_grad=True), torch.zeros(2)
        p1.grad, p2.grad = g1.clone(), g2.clone()
        norm = torch.nn.utils.clip_grad_norm_([p1, p2, p3], max_norm)
        out.update({f"clip.{name}.norm": norm, f"clip.{name}.g1": p1.grad, f"clip.{name}.g2": p2.grad})

    # ---- Adam / AdamW with parameter groups: decay 0.1, 0.0 and the optimizer's ----
    w0, b0, c0 = torch.randn(4, 3), torch.randn(3), torch.randn(2)
    x, y = torch.randn(6, 4), torch.randn(6, 3)
    out.update({"groups.w": w0, "groups.b": b0, "groups.c": c0, "groups.x": x, "groups.y": y})
    for name, make in (("adamw", lambda g: torch.optim.AdamW(g, lr=0.05, weight_decay=0.01)),
                       ("adam", lambda g: torch.optim.Adam(g, lr=0.05, weight_decay=0.02))):
        w, b, c = (t.clone().requires_grad_() for t in (w0, b0, c0))
        opt = make([{"params": [w], "weight_decay": 0.1}, {"params": [b], "weight_decay": 0.0}, {"params": [c]}])
        for step in range(1, 4):
            opt.zero_grad()
            (((x @ w + b - y) ** 2).mean() + (c * c).sum() * 0.5).backward()
            opt.step()
            for n, t in (("w", w), ("b", b), ("c", c)):  # a copy: the next steps update t in place
                out[f"groups.{name}.{n}.{step}"] = t.detach().clone()

    # ---- gradient accumulation: two half batches with loss / 2 give the full batch's gradients ----
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.GELU(), torch.nn.Linear(5, 3))
    x, y = torch.randn(8, 6), torch.randn(8, 3)
    out.update({"accum.x": x, "accum.y": y})
    out.update({"accum.param." + n: t for n, t in model.named_parameters()})
    F.mse_loss(model(x), y).backward()
    full = {n: t.grad.clone() for n, t in model.named_parameters()}
    model.zero_grad()
    for half in (slice(0, 4), slice(4, 8)):
        (F.mse_loss(model(x[half]), y[half]) / 2).backward()
    for n, t in model.named_parameters():
        check(f"accumulated {n}", t.grad, full[n], 1e-6)
        out["accum.full." + n], out["accum.accumulated." + n] = full[n], t.grad

    save_safetensors(sys.argv[1], out, torch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
