"""Writes test-vectors/synthetic-goals.json: the reference goal pipeline run by CPython on a catalogue.

Standard library only. It follows the reference steps of WebShop's engine (product prices, synthetic goals,
re-seed, shuffle) with CPython's own `random`, so the TS port (PyRandom, goals.ts) can be checked
end to end. Input: the two raw files of a catalogue (the TS synthetic generator writes them):

  node --conditions=@agentrl/source -e "import('./src/synthetic.ts').then(m => { const f = m.generateSyntheticCatalogue({ size: 300, seed: 4 }); require('fs').writeFileSync('/tmp/p.json', JSON.stringify(f.products)); require('fs').writeFileSync('/tmp/a.json', JSON.stringify(f.attributes)); })"
  python3 scripts/python-goal-vectors.py /tmp/p.json /tmp/a.json > test-vectors/synthetic-goals.json

With the real data folder: python3 scripts/python-goal-vectors.py DIR/items_shuffle_1000.json
DIR/items_ins_v2_1000.json real > test-vectors/real-goals.json (the goal test then pins it).
"""
import itertools
import json
import random
import re
import sys
from decimal import Decimal

PRICE_RANGE = [10.0 * i for i in range(1, 100)]


def load(products, attributes):
    seen, out = set(), []
    for p in products:
        asin = p['asin']
        if asin == 'nan' or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        pricing = p.get('pricing')
        if not pricing:
            pricing = [100.0]
        else:
            pricing = [float(Decimal(re.sub(r'[^\d.]', '', x))) for x in pricing.split('$')[1:]][:2]
        options = {}
        for name, contents in (p.get('customization_options') or {}).items():
            if contents is None:
                continue
            options[name.lower()] = [c['value'].strip().replace('/', ' | ').lower() for c in contents]
        a = attributes.get(asin, {})
        out.append({'asin': asin, 'Title': p['name'], 'pricing': pricing, 'options': options,
                    'instruction_text': a.get('instruction'), 'instruction_attributes': a.get('instruction_attributes')})
    return out


def goals_for(products, seed):
    random.seed(seed)
    prices = {}
    for p in products:
        pr = p['pricing']
        prices[p['asin']] = pr[0] if len(pr) == 1 else random.uniform(*pr[:2])
    goals = []
    for p in products:
        if p['instruction_text'] is None:
            continue
        cands = [x for x in PRICE_RANGE if x > prices[p['asin']]][:4]
        if len(cands) >= 2:
            _, upper = sorted(random.sample(cands, 2))
            price_text = f', and price lower than {upper:.2f} dollars'
        else:
            upper, price_text = 1000000, ''
        names = sorted(p['options'])
        for combo in itertools.product(*(p['options'][n] for n in names)):
            opts = dict(zip(names, combo))
            option_text = ', and '.join(f'{k}: {v}' for k, v in opts.items())
            option_text = ' with ' + option_text if option_text else ''
            goals.append({'asin': p['asin'], 'instruction_text': p['instruction_text'] + option_text + price_text,
                          'price_upper': upper})
    random.seed(seed)
    random.shuffle(goals)
    return prices, goals


products = load(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
# a third argument 'real' labels vectors made from the real data files (test-vectors/real-goals.json)
if len(sys.argv) > 3 and sys.argv[3] == 'real':
    result = {'catalogue': {'files': ['items_shuffle_1000.json', 'items_ins_v2_1000.json']}, 'seeds': []}
else:
    result = {'catalogue': {'generator': 'generateSyntheticCatalogue', 'size': 300, 'seed': 4}, 'seeds': []}
for seed in [0, 1000]:
    prices, goals = goals_for(products, seed)
    result['seeds'].append({
        'seed': seed,
        'count': len(goals),
        'first': [{'asin': g['asin'], 'instruction': g['instruction_text'], 'price_upper': g['price_upper']} for g in goals[:20]],
        'prices': [prices[p['asin']] for p in products[:20]],
    })
json.dump(result, sys.stdout, indent=1)
sys.stdout.write('\n')
