"""PyTorch CPU side of the model-throughput benchmark.

Reads {"configs": [...], "workload": {...}, "repeats": n, "threads": t, "loraRank": r} on stdin and
prints one JSON object with train-step and greedy KV-cache generation tokens/s for each
configuration. With loraRank > 0 the base is frozen and every projection adds
(alpha / r) * (x @ A) @ B (alpha = 2r, as the tfjs default), trained by AdamW alone; each timed
generation first merges the adapters into a copy of the weights, as the tfjs side does per call
(unmerged, eager torch decodes 2.5x slower at the tiny configuration). The model is the same
Qwen2 math as @agentrl/model-tfjs (RMSNorm, half-split rotary, GQA, q/k/v biases, SwiGLU, tied
head), written here in plain torch; the train step is forward + backward of the masked response
NLL + AdamW with grad-norm clipping, as the tfjs sftStep does.
"""
import copy
import json
import sys
import time

import torch
import torch.nn.functional as F

# Untimed runs of the full workload before timing, at least WARMUP_RUNS and WARMUP_SECONDS (the
# tfjs side does the same).
WARMUP_RUNS = 2
WARMUP_SECONDS = 3.0


def warm_up(run):
    start = time.perf_counter()
    i = 0
    while i < WARMUP_RUNS or time.perf_counter() - start < WARMUP_SECONDS:
        run()
        i += 1


class Layer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        H, nh, nkv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        d = H // nh
        self.nh, self.nkv, self.d = nh, nkv, d
        self.q = torch.nn.Linear(H, nh * d)
        self.k = torch.nn.Linear(H, nkv * d)
        self.v = torch.nn.Linear(H, nkv * d)
        self.o = torch.nn.Linear(nh * d, H, bias=False)
        self.gate = torch.nn.Linear(H, c["intermediate_size"], bias=False)
        self.up = torch.nn.Linear(H, c["intermediate_size"], bias=False)
        self.down = torch.nn.Linear(c["intermediate_size"], H, bias=False)
        self.n1 = torch.nn.Parameter(torch.ones(H))
        self.n2 = torch.nn.Parameter(torch.ones(H))
        self.adapters = torch.nn.ParameterDict()

    def add_lora(self, r):
        for name in PROJECTIONS:
            lin = getattr(self, name)
            self.adapters[name + "_A"] = torch.nn.Parameter(torch.randn(lin.in_features, r) / lin.in_features ** 0.5)
            self.adapters[name + "_B"] = torch.nn.Parameter(torch.zeros(r, lin.out_features))
        self.scale = 2.0

    def lin(self, name, x):
        y = getattr(self, name)(x)
        if len(self.adapters) == 0:
            return y
        return y + (x @ self.adapters[name + "_A"]) * self.scale @ self.adapters[name + "_B"]


PROJECTIONS = ("q", "k", "v", "o", "gate", "up", "down")


@torch.no_grad()
def merged(m):
    """A copy of m with every adapter folded into its weight (nn.Linear keeps [out, in])."""
    out = copy.deepcopy(m)
    for l in out.layers:
        if len(l.adapters) == 0:
            continue
        for name in PROJECTIONS:
            getattr(l, name).weight += (l.scale * l.adapters[name + "_A"] @ l.adapters[name + "_B"]).T
        l.adapters = torch.nn.ParameterDict()
    return out


def rms(x, w):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


def rot(x, cos, sin):
    a, b = x.chunk(2, -1)
    return x * cos + torch.cat([-b, a], -1) * sin


class Model(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.emb = torch.nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = torch.nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])
        self.norm = torch.nn.Parameter(torch.ones(c["hidden_size"]))
        d = c["hidden_size"] // c["num_attention_heads"]
        self.inv = 1.0 / (10000.0 ** (torch.arange(0, d, 2).float() / d))

    def forward(self, ids, start=0, cache=None):
        B, T = ids.shape
        pos = torch.arange(start, start + T).float()
        ang = torch.outer(pos, self.inv)
        ang = torch.cat([ang, ang], -1)
        cos, sin = ang.cos()[None, None], ang.sin()[None, None]
        x = self.emb(ids)
        new = []
        for i, l in enumerate(self.layers):
            h = rms(x, l.n1)
            q = rot(l.lin('q', h).view(B, T, l.nh, l.d).transpose(1, 2), cos, sin)
            k = rot(l.lin('k', h).view(B, T, l.nkv, l.d).transpose(1, 2), cos, sin)
            v = l.lin('v', h).view(B, T, l.nkv, l.d).transpose(1, 2)
            if cache is not None:
                k = torch.cat([cache[i][0], k], 2)
                v = torch.cat([cache[i][1], v], 2)
            new.append((k, v))
            g = l.nh // l.nkv
            kk = k.repeat_interleave(g, 1)
            vv = v.repeat_interleave(g, 1)
            s = (q @ kk.transpose(-1, -2)) / l.d ** 0.5
            S = kk.shape[2]
            mask = torch.ones(T, S, dtype=torch.bool).tril(S - T)
            s = s.masked_fill(~mask, float("-inf"))
            a = (s.softmax(-1) @ vv).transpose(1, 2).reshape(B, T, -1)
            x = x + l.lin('o', a)
            h = rms(x, l.n2)
            x = x + l.lin('down', F.silu(l.lin('gate', h)) * l.lin('up', h))
        return rms(x, self.norm) @ self.emb.weight.T, new


def measure(c, w, repeats, lora_rank=0):
    torch.manual_seed(0)
    m = Model(c)
    params = list(m.parameters())
    if lora_rank > 0:
        for p in params:
            p.requires_grad_(False)
        for l in m.layers:
            l.add_lora(lora_rank)
        params = [p for l in m.layers for p in l.adapters.values()]
    opt = torch.optim.AdamW(params, lr=1e-4)
    B, P, R = w["batch"], w["trainPrompt"], w["trainResponse"]
    ids = torch.randint(4, c["vocab_size"], (B, P + R))

    def step():
        logits, _ = m(ids[:, :-1])
        lp = logits.log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]
        loss = -lp[:, P - 1:].mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()

    warm_up(step)
    t, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        step()
    train = (time.perf_counter() - t) / repeats
    train_cpu = (time.process_time() - cpu) / repeats
    prompts = torch.randint(4, c["vocab_size"], (B, w["genPrompt"]))

    @torch.no_grad()
    def gen(n):
        g = merged(m) if lora_rank > 0 else m
        logits, cache = g(prompts)
        tok = logits[:, -1].argmax(-1, keepdim=True)
        pos = prompts.shape[1]
        for _ in range(n - 1):
            logits, cache = g(tok, pos, cache)
            pos += 1
            tok = logits[:, -1].argmax(-1, keepdim=True)

    warm_up(lambda: gen(w["genNew"]))
    t, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        gen(w["genNew"])
    g = (time.perf_counter() - t) / repeats
    g_cpu = (time.process_time() - cpu) / repeats
    return {
        "trainTokensPerSecond": B * (P + R) / train,
        "generateTokensPerSecond": B * w["genNew"] / g,
        "trainStepSeconds": train,
        "generateSeconds": g,
        "trainCpuSeconds": train_cpu,
        "generateCpuSeconds": g_cpu,
    }


def blas():
    """The BLAS library torch's process actually mapped (Debian's libblas.so.3 alternative)."""
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return "unknown BLAS"
    if "openblas" in maps:
        return "OpenBLAS"
    if "libblas" in maps:
        return "reference BLAS"
    return "unknown BLAS"


if __name__ == "__main__":
    req = json.load(sys.stdin)
    # Intra-op threads (default 1); the caller sets OPENBLAS_NUM_THREADS / OMP_NUM_THREADS to match.
    torch.set_num_threads(int(req.get("threads", 1)))
    rank = int(req.get("loraRank", 0))
    out = {c["name"]: measure(c["hf"], req["workload"], req["repeats"], rank) for c in req["configs"]}
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "blas": blas(), "results": out}))
