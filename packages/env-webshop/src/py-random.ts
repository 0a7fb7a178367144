/**
 * A small port of CPython's `random` module (MT19937), enough to reproduce WebShop's goal price
 * bounds and goal permutation bit for bit: `seed(int)`, `random`, `uniform`,
 * `_randbelow`, `sample(pop, k)` (pool method) and `shuffle`.
 */

const N = 624;
const M = 397;

/** CPython's `random.Random`, restricted to what WebShop uses. */
export class PyRandom {
  readonly #mt = new Uint32Array(N);
  #index = N + 1;

  constructor(seed: number | bigint = 0) {
    this.seed(seed);
  }

  /** `random.seed(n)` for an integer: `init_by_array` over the 32-bit words of `abs(n)`. */
  seed(seed: number | bigint): void {
    if (typeof seed === 'number' && !Number.isSafeInteger(seed)) {
      throw new RangeError(`PyRandom.seed: seed ${seed} must be a safe integer or a bigint`);
    }
    let n = BigInt(seed);
    if (n < 0n) n = -n;
    const key: number[] = [];
    while (n > 0n) {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    }
    if (key.length === 0) key.push(0);
    this.#initByArray(key);
  }

  #initGenrand(s: number): void {
    const mt = this.#mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] as number;
      const x = (prev ^ (prev >>> 30)) >>> 0;
      mt[i] = (Math.imul(1812433253, x) + i) >>> 0;
    }
    this.#index = N;
  }

  #initByArray(key: readonly number[]): void {
    const mt = this.#mt;
    this.#initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] as number;
      const x = (prev ^ (prev >>> 30)) >>> 0;
      mt[i] = (((mt[i] as number) ^ Math.imul(x, 1664525)) + (key[j] as number) + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1] as number;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] as number;
      const x = (prev ^ (prev >>> 30)) >>> 0;
      mt[i] = (((mt[i] as number) ^ Math.imul(x, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1] as number;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    this.#index = N;
  }

  /** The next 32-bit output of MT19937 (`getrandbits(32)`). */
  nextUint32(): number {
    const mt = this.#mt;
    if (this.#index >= N) {
      for (let kk = 0; kk < N; kk++) {
        const y = ((mt[kk] as number) & 0x80000000) | ((mt[(kk + 1) % N] as number) & 0x7fffffff);
        mt[kk] = ((mt[(kk + M) % N] as number) ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
      }
      this.#index = 0;
    }
    let y = mt[this.#index++] as number;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random.random()`: 53 random bits as a float in [0, 1). */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** `random.uniform(a, b) = a + (b - a) * random()`. */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.random();
  }

  /** `random._randbelow(n)` for 0 < n < 2^32: rejection sampling on `n.bit_length()` bits. */
  randBelow(n: number): number {
    if (!Number.isInteger(n) || n <= 0 || n > 0xffffffff) {
      throw new RangeError(`PyRandom.randBelow: n = ${n} must be an integer in [1, 2^32)`);
    }
    const k = 32 - Math.clz32(n);
    let r = this.nextUint32() >>> (32 - k);
    while (r >= n) r = this.nextUint32() >>> (32 - k);
    return r;
  }

  /** `random.sample(population, k)` for populations of at most 21 items (the pool method). */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (k < 0 || k > n) throw new RangeError(`PyRandom.sample: k = ${k} must be in [0, ${n}]`);
    if (n > 21 || k > 5) {
      throw new RangeError('PyRandom.sample: only the pool method (n <= 21, k <= 5) is ported');
    }
    const pool = [...population];
    const out: T[] = [];
    for (let i = 0; i < k; i++) {
      const j = this.randBelow(n - i);
      out.push(pool[j] as T);
      pool[j] = pool[n - i - 1] as T;
    }
    return out;
  }

  /** `random.shuffle(x)` in place. */
  shuffle<T>(x: T[]): void {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randBelow(i + 1);
      const t = x[i] as T;
      x[i] = x[j] as T;
      x[j] = t;
    }
  }
}
