import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dropArgsSeparator } from './script-args.ts';

describe('dropArgsSeparator', () => {
  it('drops the -- that pnpm passes before or among the arguments', () => {
    expect(dropArgsSeparator(['--', '--smoke'])).toEqual(['--smoke']);
    expect(dropArgsSeparator(['eval', '-c', 'eval.yaml', '--', '--episodes', '3'])).toEqual([
      'eval',
      '-c',
      'eval.yaml',
      '--episodes',
      '3',
    ]);
    expect(dropArgsSeparator(['--smoke'])).toEqual(['--smoke']);
  });

  it('removes exactly one -- when there is one, and nothing else', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('--', '-x', 'a', '--y')), (args) => {
        const out = dropArgsSeparator(args);
        const separators = args.filter((a) => a === '--').length;
        expect(out.length).toBe(args.length - (separators > 0 ? 1 : 0));
        expect(out.filter((a) => a !== '--')).toEqual(args.filter((a) => a !== '--'));
      }),
    );
  });
});
