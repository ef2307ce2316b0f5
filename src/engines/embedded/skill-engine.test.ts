import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fakeEncoder, fakeMiniLm, seededUnitVectorFromText } from '../../../test/fixtures/embedded.ts';
import { modelDirWithoutSkill } from '../../../test/fixtures/model-dir.ts';
import { yesNo } from '../../../test/fixtures/questions.ts';
import { encodeFloats } from '../../training/artifact.ts';
import { SKILL_FORMAT, type SkillFile, type WeightsFile } from './artifacts.ts';
import { createEmbeddedEngine } from './index.ts';
import { frameText } from './skill.ts';

/** The committed artifact with a skill model of one measured kind: "Is this about sports?" (skill 0.9). */
function modelDirWithSkill(): string {
  const dir = modelDirWithoutSkill();
  const weights = JSON.parse(readFileSync(join(dir, 'weights.json'), 'utf8')) as WeightsFile;
  const frame = frameText('noul', 'Is this about sports?', yesNo('x').options);
  const skill: SkillFile = {
    format: SKILL_FORMAT,
    modelId: weights.modelId,
    encoder: 'test',
    sharpness: 20,
    prior: 0.05,
    quantile: 0.5,
    floor: 0.1,
    units: [
      {
        name: 'sports/own',
        type: 'noul',
        centroid: encodeFloats(seededUnitVectorFromText(frame)),
        skill: 0.9,
        weight: 1,
      },
    ],
  };
  writeFileSync(join(dir, 'skill.json'), JSON.stringify(skill));
  return dir;
}

describe('the embedded engine with a skill model (brier-lite 4.1)', () => {
  const dir = modelDirWithSkill();
  after(() => rmSync(dir, { recursive: true, force: true }));
  const ask = async (instructions: string) => {
    const mini = fakeMiniLm();
    const engine = createEmbeddedEngine({ modelDir: dir, encoder: fakeEncoder(), miniLm: mini });
    const answer = await engine.answer(
      { state: { text: 'The match went to extra time.', json: undefined }, questions: [yesNo(instructions)] },
      new AbortController().signal,
    );
    await engine.close();
    return { p: answer.probabilities[0] ?? [], miniCalls: mini.calls.flat().filter((t) => t !== 'warm up') };
  };

  it('answers a question of a measured kind, reading the second encoder for it', async () => {
    const { p, miniCalls } = await ask('Is this about sports?');
    assert.notDeepEqual(p, [0.5, 0.5]);
    assert.ok(miniCalls.includes('The match went to extra time.'), 'MiniLM read the state');
  });

  it('answers uniform a question it cannot place, and spends no second encoding on it', async () => {
    const { p, miniCalls } = await ask('Does this sentence answer the question "Who scored?"?');
    assert.deepEqual(p, [0.5, 0.5]);
    assert.deepEqual(miniCalls, []);
  });
});
