#!/usr/bin/env python3
"""PyTorch peer for `tg bench gpt`: the same GPT (GPT-2's architecture, Hugging Face's Conv1D
layouts and names) and recipe as `tg train gpt`; prints one JSON line.

  --mode step     median training-step time (AdamW, decay groups, clip 1.0) on fixed random tokens
  --mode sample   tokens/s of batch-1 sampling with a key/value cache, `--tokens` new tokens
  --mode train    trains `--train-steps` steps from the weights in `--init` (a safetensors file
                  that `tg bench gpt` wrote: the same start as ours) on the same batches as ours
                  (splitmix64 offsets into the same bytes), and reports the validation loss on the
                  same validation batches

Float32 by default (TF32 off); `--bf16` runs the model under torch.autocast(bfloat16) instead.
Attention is F.scaled_dot_product_attention where this torch has it (FlashAttention on a GPU),
else the explicit softmax. Debian's python3-torch on CPU, the GPU machine's torch on CUDA."""
import argparse, json, math, struct, statistics, time

p = argparse.ArgumentParser()
p.add_argument("--mode", choices=["step", "sample", "train"], default="step")
p.add_argument("--layers", type=int, default=2)
p.add_argument("--heads", type=int, default=2)
p.add_argument("--embd", type=int, default=64)
p.add_argument("--context", type=int, default=64)
p.add_argument("--vocab", type=int, default=256)
p.add_argument("--bs", type=int, default=16)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--tokens", type=int, default=100)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--device", default="cpu")
p.add_argument("--bf16", action="store_true")
p.add_argument("--compile", action="store_true")
p.add_argument("--init", help="safetensors weights to start from (train mode)")
p.add_argument("--data", help="the text (train mode)")
p.add_argument("--train-steps", type=int, default=100)
p.add_argument("--lr", type=float, default=1e-3)
p.add_argument("--min-lr", type=float)
p.add_argument("--warmup", type=int)
p.add_argument("--weight-decay", type=float, default=0.1)
p.add_argument("--eval-batches", type=int, default=8)
p.add_argument("--seed", type=int, default=1337)
a = p.parse_args()

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_num_threads(a.threads)
torch.manual_seed(0)
dev = a.device
C, H, L, T, V = a.embd, a.heads, a.layers, a.context, a.vocab
HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


def init_weights():
    w = {"wte.weight": torch.randn(V, C) * 0.02, "wpe.weight": torch.randn(T, C) * 0.02,
         "ln_f.weight": torch.ones(C), "ln_f.bias": torch.zeros(C)}
    proj = 0.02 / math.sqrt(2 * L)
    for i in range(L):
        p_ = f"h.{i}."
        w.update({p_ + "ln_1.weight": torch.ones(C), p_ + "ln_1.bias": torch.zeros(C),
                  p_ + "attn.c_attn.weight": torch.randn(C, 3 * C) * 0.02, p_ + "attn.c_attn.bias": torch.zeros(3 * C),
                  p_ + "attn.c_proj.weight": torch.randn(C, C) * proj, p_ + "attn.c_proj.bias": torch.zeros(C),
                  p_ + "ln_2.weight": torch.ones(C), p_ + "ln_2.bias": torch.zeros(C),
                  p_ + "mlp.c_fc.weight": torch.randn(C, 4 * C) * 0.02, p_ + "mlp.c_fc.bias": torch.zeros(4 * C),
                  p_ + "mlp.c_proj.weight": torch.randn(4 * C, C) * proj, p_ + "mlp.c_proj.bias": torch.zeros(C)})
    return w


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", name
        b, end = e["data_offsets"]
        out[name[len("transformer."):] if name.startswith("transformer.") else name] = \
            torch.frombuffer(bytearray(data[b:end]), dtype=torch.float32).reshape(e["shape"])
    return out


w = load_safetensors(a.init) if a.init else init_weights()
w = {k: v.to(dev).requires_grad_(True) for k, v in w.items()}


def attend(q, k, v, causal, mask=None):
    if HAS_SDPA:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril().logical_not(), float("-inf"))
    if mask is not None:
        s = s.masked_fill(mask.logical_not(), float("-inf"))
    return s.softmax(-1) @ v


def forward(idx, cache=None, pos=0):
    B, t = idx.shape
    x = w["wte.weight"][idx] + w["wpe.weight"][pos:pos + t]
    for i in range(L):
        p_ = f"h.{i}."
        h = F.layer_norm(x, (C,), w[p_ + "ln_1.weight"], w[p_ + "ln_1.bias"])
        q, k, v = (h @ w[p_ + "attn.c_attn.weight"] + w[p_ + "attn.c_attn.bias"]).split(C, dim=2)
        q, k, v = (z.view(B, t, H, C // H).transpose(1, 2) for z in (q, k, v))
        if cache is not None:  # one token: append to the cache, attend to all of it
            cache[i] = (torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)) if cache[i] else (k, v)
            k, v = cache[i]
        y = attend(q, k, v, causal=cache is None).transpose(1, 2).reshape(B, t, C)
        x = x + y @ w[p_ + "attn.c_proj.weight"] + w[p_ + "attn.c_proj.bias"]
        h = F.layer_norm(x, (C,), w[p_ + "ln_2.weight"], w[p_ + "ln_2.bias"])
        x = x + F.gelu(h @ w[p_ + "mlp.c_fc.weight"] + w[p_ + "mlp.c_fc.bias"], approximate="tanh") \
            @ w[p_ + "mlp.c_proj.weight"] + w[p_ + "mlp.c_proj.bias"]
    return F.layer_norm(x, (C,), w["ln_f.weight"], w["ln_f.bias"]) @ w["wte.weight"].T


def loss_of(x, y):
    with torch.autocast(device_type="cuda" if dev.startswith("cuda") else "cpu", dtype=torch.bfloat16, enabled=a.bf16):
        logits = forward(x)
    return F.cross_entropy(logits.float().reshape(-1, V), y.reshape(-1))


decay = [v for v in w.values() if v.dim() >= 2]
no_decay = [v for v in w.values() if v.dim() < 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=a.lr, betas=(0.9, 0.95), eps=1e-8)


def step(x, y):
    opt.zero_grad(set_to_none=True)
    loss = loss_of(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(list(w.values()), 1.0)
    opt.step()
    return loss


def sync():
    if dev.startswith("cuda"):
        torch.cuda.synchronize()


MASK64 = (1 << 64) - 1


class SplitMix64:  # the generator `tg train gpt` draws its batch offsets from
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def batch(tokens, rng):
    offsets = len(tokens) - T
    rows = [rng.next() % offsets for _ in range(a.bs)]
    x = torch.stack([tokens[r:r + T] for r in rows]).to(dev)
    y = torch.stack([tokens[r + 1:r + T + 1] for r in rows]).to(dev)
    return x.long(), y.long()


out = {"torch": torch.__version__, "dtype": "bf16 autocast" if a.bf16 else "fp32", "sdpa": HAS_SDPA,
       "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32}
if a.mode == "step":
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, V, (a.bs, T), generator=g).to(dev)
    y = torch.randint(0, V, (a.bs, T), generator=g).to(dev)
    run = torch.compile(step) if a.compile else step
    warmup = 3 if a.compile else 2
    times = []
    for i in range(a.steps + warmup):
        sync()
        t0 = time.perf_counter()
        run(x, y).item()
        sync()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1000)
    out.update(step_ms=statistics.median(times), tokens_per_s=a.bs * T / statistics.median(times) * 1000)
elif a.mode == "sample":
    with torch.no_grad():
        times = []
        for rep in range(2):  # the first run warms up
            cache = [None] * L
            tok = torch.zeros(1, 1, dtype=torch.long, device=dev)
            g = torch.Generator(device=dev).manual_seed(rep)
            sync()
            t0 = time.perf_counter()
            for pos in range(min(a.tokens, T)):
                with torch.autocast(device_type="cuda" if dev.startswith("cuda") else "cpu", dtype=torch.bfloat16,
                                    enabled=a.bf16):
                    logits = forward(tok, cache, pos)[:, -1].float()
                v_, i_ = logits.topk(min(200, V))
                probs = (v_ / 0.8).softmax(-1)
                tok = i_.gather(1, torch.multinomial(probs, 1, generator=g))
                tok.item()
            sync()
            times.append(time.perf_counter() - t0)
    out.update(tokens_per_s=min(a.tokens, T) / times[-1])
else:
    with open(a.data, "rb") as f:
        text = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8).to(torch.int64)
    n_val = int(len(text) * 0.1)
    train, val = text[:len(text) - n_val], text[len(text) - n_val:]
    warmup = a.warmup if a.warmup is not None else a.train_steps // 10
    min_lr = a.min_lr if a.min_lr is not None else a.lr / 10

    def lr_at(t):  # nanoGPT's get_lr, as WarmupCosineLR
        if t < warmup:
            return a.lr * (t + 1) / (warmup + 1)
        if t > a.train_steps:
            return min_lr
        return min_lr + 0.5 * (1 + math.cos(math.pi * (t - warmup) / (a.train_steps - warmup))) * (a.lr - min_lr)

    rng = SplitMix64(a.seed)
    for t in range(a.train_steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(t)
        loss = step(*batch(train, rng)).item()
    vrng = SplitMix64(a.seed ^ 0x5A5A5A5A)
    with torch.no_grad():
        val_loss = statistics.mean(loss_of(*batch(val, vrng)).item() for _ in range(a.eval_batches))
    out.update(train_loss=loss, val_loss=val_loss)
print(json.dumps(out))
