import { describe, expect, it } from 'vitest';
import { normaliseEvidence } from '../bench/locomo/evidence.ts';

describe('LoCoMo evidence normalisation (bench/locomo)', () => {
  it('splits, repairs and drops malformed entries', () => {
    expect(normaliseEvidence(['D1:3'])).toEqual(['D1:3']);
    expect(normaliseEvidence(['D8:6; D9:17'])).toEqual(['D8:6', 'D9:17']);
    expect(normaliseEvidence(['D9:1 D4:4 D4:6', 'D4:4'])).toEqual(['D9:1', 'D4:4', 'D4:6']);
    expect(normaliseEvidence(['D:11:26'])).toEqual(['D11:26']);
    expect(normaliseEvidence(['D'])).toEqual([]);
  });
});
