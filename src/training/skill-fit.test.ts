import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededUnitVector } from '../../test/fixtures/embedded.ts';
import { mulberry32 } from '../lib/seeded.ts';
import { fitSkill, heldOutWith, optimalSkill, type SkillItem } from './skill-fit.ts';

/** A unit vector at cosine c with v. */
function near(v: Float32Array, c: number, seed: number): Float32Array {
  const u = seededUnitVector(seed);
  let along = 0;
  for (let d = 0; d < v.length; d++) along += (u[d] ?? 0) * (v[d] ?? 0);
  const perp = Float32Array.from(u, (x, d) => x - along * (v[d] ?? 0));
  const n = Math.hypot(...perp);
  return Float32Array.from(v, (x, d) => c * x + Math.sqrt(1 - c * c) * ((perp[d] ?? 0) / n));
}

/**
 * n yes/no answers of a set: `right` of them lean (by `lean`) toward the label, the rest away from it.
 */
function answers(set: string, frame: Float32Array, n: number, right: number, lean: number, seed: number): SkillItem[] {
  const random = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => {
    const yes = random() < 0.5 ? 1 : 0;
    const toward = i < n * right;
    const pYes = 0.5 + (toward === (yes === 1) ? lean : -lean);
    return {
      unit: `${set}/own`,
      set,
      type: 'noul' as const,
      frameText: set,
      frame,
      family: 'topic',
      p: [1 - pYes, pYes],
      t: [1 - yes, yes],
    };
  });
}

describe('stage S: the skill model', () => {
  const topic = seededUnitVector(10);
  const pair = seededUnitVector(11);
  const items = [
    // three topic-like sets that answer well, in frames close to each other
    ...answers('topics_a', near(topic, 0.97, 1), 300, 0.85, 0.3, 1),
    ...answers('topics_b', near(topic, 0.97, 2), 300, 0.85, 0.3, 2),
    ...answers('topics_c', near(topic, 0.97, 3), 300, 0.85, 0.3, 3),
    // two pair-like sets read as topics whose answers point the wrong way
    ...answers('pairs_a', near(pair, 0.97, 4), 300, 0.3, 0.3, 4),
    ...answers('pairs_b', near(pair, 0.97, 5), 300, 0.3, 0.3, 5),
    // a kind like no other
    ...answers('odd', seededUnitVector(12), 300, 0.9, 0.3, 6),
  ];
  const fit = fitSkill(items);
  const skillOfSet = (set: string) => {
    const s = items.map((it, i) => ({ it, s: fit.heldOutSkill[i] ?? 0 })).filter((x) => x.it.set === set);
    return s.reduce((a, x) => a + x.s, 0) / s.length;
  };

  it('measures each unit: s* near 1 where answers are right, 0 where they point the wrong way', () => {
    const unit = new Map(fit.units.map((u) => [u.name, u.skill]));
    assert.ok((unit.get('topics_a/own') ?? 0) > 0.8);
    assert.equal(unit.get('pairs_a/own'), 0);
    assert.equal(optimalSkill(0, 0), 0);
  });

  it('answers a held-out set with the skill of the kinds its questions are like, never its own', () => {
    assert.ok(skillOfSet('topics_a') > 0.5, `topics held out: ${skillOfSet('topics_a')}`);
    assert.ok(skillOfSet('pairs_a') < 0.1, `pairs held out: ${skillOfSet('pairs_a')}`);
    // odd answers well, but no other set is like it: held out, it cannot be placed
    assert.ok(skillOfSet('odd') < 0.1, `odd held out: ${skillOfSet('odd')}`);
    const odd = fit.model.units.find((u) => u.name === 'odd/own');
    assert.ok(odd && odd.skill > 0.8, 'the shipped model knows it');
  });

  it('holds out twins together', () => {
    assert.deepEqual([...heldOutWith('sst2')], ['sst2', 'sst5']);
    assert.deepEqual([...heldOutWith('ag_news')], ['ag_news']);
  });
});
