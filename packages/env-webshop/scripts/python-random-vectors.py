"""Writes test-vectors/python-random.json: outputs of CPython's `random` for the TS port.

Standard library only. Run: python3 scripts/python-random-vectors.py > test-vectors/python-random.json
"""
import json
import random
import sys

PRICE_RANGE = [10.0 * i for i in range(1, 100)]
cases = []
for seed in [0, 1, 2, 42, 233, 1000, 1001, 2**31 - 1, 2**32, 2**40 + 7, 123456789012345678901234567890, -5]:
    r = random.Random(seed)
    case = {"seed": str(seed)}
    case["getrandbits32"] = [r.getrandbits(32) for _ in range(5)]
    r.seed(seed)
    case["random"] = [r.random() for _ in range(5)]
    r.seed(seed)
    case["uniform"] = [r.uniform(3.5, 97.25) for _ in range(5)]
    r.seed(seed)
    case["randbelow"] = [r._randbelow(n) for n in [1, 2, 3, 4, 5, 7, 100, 1000, 2**20 + 3]]
    r.seed(seed)
    case["sample2"] = [r.sample([10.0, 20.0, 30.0, 40.0][:k], 2) for k in [2, 3, 4, 4, 4, 3]]
    r.seed(seed)
    lst = list(range(23))
    r.shuffle(lst)
    case["shuffle23"] = lst
    # the goal-price pattern of WebShop's goals: sample(cands, 2) where cands = first 4 of PRICE_RANGE above p
    r.seed(seed)
    bounds = []
    for p in [1.5, 5.0, 12.99, 975.0, 985.5, 995.0, 49.99]:
        cands = [x for x in PRICE_RANGE if x > p][:4]
        bounds.append(max(r.sample(cands, 2)) if len(cands) >= 2 else 1000000)
    case["priceBounds"] = bounds
    cases.append(case)
json.dump({"python": sys.version.split()[0], "cases": cases}, sys.stdout, indent=1)
sys.stdout.write("\n")
