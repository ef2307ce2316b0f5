import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededInput } from '../../test/fixtures/embedded.ts';
import { bilinearForward } from '../engines/embedded/head.ts';
import { mulberry32 } from '../lib/seeded.ts';
import { averageBilinear, emptyBilinear } from './bilinear.ts';

describe('bilinear head math', () => {
  it('the average of heads scores the mean of their bilinear scores, for every type', () => {
    const heads = [3, 5, 8].map((rank, h) => {
      const rand = mulberry32(100 + h);
      return emptyBilinear(rank, () => rand() - 0.5);
    });
    // noul and score average all three heads, choice only the first two
    const byType = { noul: heads, choice: heads.slice(0, 2), score: heads };
    const mean = averageBilinear(byType);
    assert.deepEqual([mean.noul.rank, mean.choice.rank, mean.score.rank], [16, 8, 16]);
    for (const type of ['noul', 'choice', 'score'] as const) {
      const x = seededInput(type, type === 'noul' ? 2 : 5, 70);
      const got = bilinearForward(x, mean).bil;
      const own = byType[type];
      for (let k = 0; k < x.k; k++) {
        const want = own.reduce((a, h) => a + (bilinearForward(x, h).bil[k] ?? 0), 0) / own.length;
        assert.ok(Math.abs((got[k] ?? 0) - want) < 1e-5, `${type}[${k}]: ${got[k]} vs ${want}`);
      }
    }
    assert.throws(() => averageBilinear({ ...byType, choice: [] }), /no heads for choice/);
  });
});
