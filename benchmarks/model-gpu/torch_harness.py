"""PyTorch side of the model-gpu benchmark.

Reads {"device": "auto"|"cuda"|"cpu", "repeats": n, "workloads": [...]} on stdin and prints one
JSON object with, per workload, the median wall time of a step, tokens/s and peak memory.
The model is the same Qwen2 math as @agentrl/model-tfjs (RMSNorm, half-split rotary, grouped
KV heads, q/k/v biases, SwiGLU, tied head) in plain torch, fp32, eager (no compile, no TF32
unless a block precision asks for it). Workload kinds:

- block-forward / block-forward-backward: embedding + decoder layer(s) + final norm over
  batch x seq tokens; the backward is of sum(hidden * dy) and reaches every parameter.
- train: forward + backward of the mean response-token NLL over micro-batches (gradient
  accumulation), clipping to norm 1, AdamW: what sftStep does.
- lora: the same step with the base frozen and rank-r adapters (x A B, scale alpha / r) on
  q/k/v/o/gate/up/down; AdamW over the adapters only.
- generate: prefill of the prompts, then greedy decoding with a KV cache; the sampled ids are
  read back every step (as a sampler that checks stop tokens must).
"""
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


class Lora(torch.nn.Module):
    """A frozen linear layer plus scale * (x A) B."""

    def __init__(self, base, rank, alpha):
        super().__init__()
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        self.a = torch.nn.Parameter(torch.randn(base.in_features, rank, device=base.weight.device) / math.sqrt(base.in_features))
        self.b = torch.nn.Parameter(torch.zeros(rank, base.out_features, device=base.weight.device))
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + (x @ self.a) @ self.b * self.scale


class Layer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        H, nh, nkv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        d = H // nh
        self.nh, self.nkv, self.d = nh, nkv, d
        self.q_proj = torch.nn.Linear(H, nh * d)
        self.k_proj = torch.nn.Linear(H, nkv * d)
        self.v_proj = torch.nn.Linear(H, nkv * d)
        self.o_proj = torch.nn.Linear(nh * d, H, bias=False)
        self.gate_proj = torch.nn.Linear(H, c["intermediate_size"], bias=False)
        self.up_proj = torch.nn.Linear(H, c["intermediate_size"], bias=False)
        self.down_proj = torch.nn.Linear(c["intermediate_size"], H, bias=False)
        self.n1 = torch.nn.Parameter(torch.ones(H))
        self.n2 = torch.nn.Parameter(torch.ones(H))


LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def rms(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rot(x, cos, sin):
    a, b = x.chunk(2, -1)
    return x * cos + torch.cat([-b, a], -1) * sin


def attend(q, k, v, causal):
    """q [B, nh, T, d], k/v [B, nkv, S, d] (kv heads repeated here)."""
    g = q.shape[1] // k.shape[1]
    if g > 1:
        k = k.repeat_interleave(g, 1)
        v = v.repeat_interleave(g, 1)
    if HAS_SDPA:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    T, S = q.shape[2], k.shape[2]
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        mask = torch.ones(T, S, dtype=torch.bool, device=q.device).tril(S - T)
        s = s.masked_fill(~mask, float("-inf"))
    return s.softmax(-1) @ v


class Model(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.eps = c.get("rms_norm_eps", 1e-6)
        self.emb = torch.nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = torch.nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])
        self.norm = torch.nn.Parameter(torch.ones(c["hidden_size"]))
        d = c["hidden_size"] // c["num_attention_heads"]
        theta = c.get("rope_theta", 10000.0)
        self.register_buffer("inv", 1.0 / (theta ** (torch.arange(0, d, 2).float() / d)), persistent=False)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
                    m.weight.normal_(0.0, 0.02)
                    if getattr(m, "bias", None) is not None:
                        m.bias.zero_()

    def add_lora(self, rank, alpha):
        for p in self.parameters():
            p.requires_grad_(False)
        for l in self.layers:
            for name in LORA_TARGETS:
                setattr(l, name, Lora(getattr(l, name), rank, alpha))

    def hidden(self, ids, start=0, cache=None):
        B, T = ids.shape
        pos = torch.arange(start, start + T, device=ids.device).float()
        ang = torch.outer(pos, self.inv)
        ang = torch.cat([ang, ang], -1)
        cos, sin = ang.cos()[None, None], ang.sin()[None, None]
        x = self.emb(ids)
        new = []
        for i, l in enumerate(self.layers):
            h = rms(x, l.n1, self.eps)
            q = rot(l.q_proj(h).view(B, T, l.nh, l.d).transpose(1, 2), cos, sin)
            k = rot(l.k_proj(h).view(B, T, l.nkv, l.d).transpose(1, 2), cos, sin)
            v = l.v_proj(h).view(B, T, l.nkv, l.d).transpose(1, 2)
            if cache is not None:
                k = torch.cat([cache[i][0], k], 2)
                v = torch.cat([cache[i][1], v], 2)
            new.append((k, v))
            a = attend(q, k, v, causal=T > 1).transpose(1, 2).reshape(B, T, -1)
            x = x + l.o_proj(a)
            h = rms(x, l.n2, self.eps)
            x = x + l.down_proj(F.silu(l.gate_proj(h)) * l.up_proj(h))
        return rms(x, self.norm, self.eps), new

    def logits(self, h):
        return h @ self.emb.weight.T


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def timed(dev, fn, repeats):
    fn()  # warm-up (allocator, kernels, optimizer state)
    sync(dev)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync(dev)
        times.append((time.perf_counter() - t) * 1000.0)
    times.sort()
    return times[len(times) // 2], times


def build(c, dev):
    torch.manual_seed(0)
    if dev.type == "cuda" and hasattr(torch, "get_default_device"):
        with torch.device(dev):
            return Model(c)
    return Model(c).to(dev)


def live_bytes(tensors):
    """Bytes of distinct tensor storages (a storage shared by views counted once)."""
    seen = {}
    for t in tensors:
        if torch.is_tensor(t):
            st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            seen[st.data_ptr()] = st.nbytes()
    return sum(seen.values())


def cpu_peak_bytes(step, held):
    """Peak bytes allocated on the CPU by one `step`: the tensors `held` before it (weights,
    optimizer state, gradients) plus the largest running sum of the allocations and frees the profiler
    records during it (PyTorch's CPU allocator keeps no peak statistic of its own)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    # Kineto's memory records: one per allocation (+bytes) and per free (-bytes).
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_us())
    running = peak = 0
    for e in events:
        running += e.nbytes()
        peak = max(peak, running)
    return live_bytes(held) + peak


def run_workload(w, dev, repeats):
    kind = w["kind"]
    c = w["config"]
    V = c["vocab_size"]
    g = torch.Generator(device="cpu").manual_seed(2)
    m = build(c, dev)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    out = {}
    if kind in ("block-forward", "block-forward-backward"):
        B, T = w["batch"], w["seqLen"]
        ids = torch.randint(0, V, (B, T), generator=g).to(dev)
        dy = torch.randn(B, T, c["hidden_size"], generator=g).to(dev)
        tokens = B * T
        if kind == "block-forward":

            def step():
                with torch.no_grad():
                    m.hidden(ids)

        else:

            def step():
                m.zero_grad(set_to_none=True)
                h, _ = m.hidden(ids)
                (h * dy).sum().backward()

        precisions = {}
        for p in w.get("precisions", ["fp32"]):
            if p != "fp32" and dev.type != "cuda":
                continue
            torch.backends.cuda.matmul.allow_tf32 = p == "tf32"
            torch.backends.cudnn.allow_tf32 = p == "tf32"
            if p == "bf16":
                def run(step=step):
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        step()
            else:
                run = step
            ms, _ = timed(dev, run, repeats)
            precisions[p] = {"ms": ms, "tokensPerSecond": tokens / ms * 1000.0}
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        ms = precisions["fp32"]["ms"]
        out = {"ms": ms, "tokens": tokens, "tokensPerSecond": tokens / ms * 1000.0, "precisions": precisions}
    elif kind in ("train", "lora"):
        B, P, R = w["batch"], w["promptLen"], w["responseLen"]
        if kind == "lora":
            m.add_lora(w["loraRank"], w["loraAlpha"])
        params = [p for p in m.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-5, weight_decay=0.01)
        ids = torch.randint(0, V, (B, P + R), generator=g).to(dev)
        mb = w.get("microBatchSize") or B
        total = B * R

        def step():
            opt.zero_grad(set_to_none=True)
            for s in range(0, B, mb):
                x = ids[s : s + mb]
                h, _ = m.hidden(x[:, :-1])
                logits = m.logits(h[:, P - 1 :])
                lp = logits.log_softmax(-1).gather(-1, x[:, P:, None])[..., 0]
                (-lp.sum() / total).backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()

        ms, _ = timed(dev, step, repeats)
        if dev.type == "cpu":
            state = [t for st in opt.state.values() for t in st.values()]
            grads = [p.grad for p in params if p.grad is not None]
            out["peakAllocatedBytes"] = cpu_peak_bytes(step, list(m.parameters()) + state + grads)
        tokens = B * (P + R)
        out = {**out, "ms": ms, "tokens": tokens, "tokensPerSecond": tokens / ms * 1000.0, "microBatchSize": mb,
               "trainableParameters": sum(p.numel() for p in params)}
    elif kind == "generate":
        B, P, N = w["batch"], w["promptLen"], w["newTokens"]
        prompts = torch.randint(0, V, (B, P), generator=g).to(dev)

        @torch.no_grad()
        def gen():
            h, cache = m.hidden(prompts)
            tok = m.logits(h[:, -1:]).argmax(-1)
            tok.tolist()
            pos = P
            for _ in range(N - 1):
                h, cache = m.hidden(tok, pos, cache)
                pos += 1
                tok = m.logits(h).argmax(-1)
                tok.tolist()

        ms, _ = timed(dev, gen, repeats)
        tokens = B * N
        out = {"ms": ms, "tokens": tokens, "tokensPerSecond": tokens / ms * 1000.0}
        if dev.type == "cpu":
            out["peakAllocatedBytes"] = cpu_peak_bytes(gen, list(m.parameters()))
    else:
        raise ValueError(f"unknown workload kind {kind!r}")
    if dev.type == "cuda":
        out["peakAllocatedBytes"] = torch.cuda.max_memory_allocated(dev)
        out["peakReservedBytes"] = torch.cuda.max_memory_reserved(dev)
    out["parameters"] = sum(p.numel() for p in m.parameters())
    del m
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return out


def main():
    req = json.load(sys.stdin)
    want = req.get("device", "auto")
    if want == "auto":
        want = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(want)
    if dev.type == "cpu":
        torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    results = {}
    for w in req["workloads"]:
        try:
            results[w["name"]] = run_workload(w, dev, req.get("repeats", 3))
        except Exception as e:  # one failing workload (e.g. out of memory) must not lose the others
            results[w["name"]] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
            if dev.type == "cuda":
                torch.cuda.empty_cache()
        print(f"torch: {w['name']} done", file=sys.stderr, flush=True)
    meta = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": dev.type,
        "deviceName": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
        "attention": "sdpa" if HAS_SDPA else "math (softmax)",
        "threads": torch.get_num_threads(),
        "dtype": "float32",
    }
    print(json.dumps({**meta, "results": results}))


if __name__ == "__main__":
    main()
