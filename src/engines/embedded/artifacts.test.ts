import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeFloats, type ReportFile, readArtifactFiles, readModelCard } from './artifacts.ts';
import { DEFAULT_MODEL_DIR, EMBEDDED_MODEL_ID } from './index.ts';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'brier-artifacts-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A folder under `dir` holding the given files. */
async function folder(name: string, files: Record<string, string>): Promise<string> {
  const d = join(dir, name);
  await rm(d, { recursive: true, force: true });
  await mkdir(d);
  for (const [file, text] of Object.entries(files)) await writeFile(join(d, file), text);
  return d;
}

describe('artifact files', () => {
  it('reads the committed weights and calibration files of the shipped model', () => {
    const { weights, calibration } = readArtifactFiles(DEFAULT_MODEL_DIR);
    assert.equal(weights.modelId, EMBEDDED_MODEL_ID);
    assert.equal(calibration.modelId, EMBEDDED_MODEL_ID);
  });

  it('decodes little-endian float32 base64 and refuses a matrix of the wrong size, naming it', () => {
    const bytes = Buffer.alloc(8);
    bytes.writeFloatLE(1.5, 0);
    bytes.writeFloatLE(-2, 4);
    assert.deepEqual([...decodeFloats(bytes.toString('base64'), 2, 'x')], [1.5, -2]);
    assert.throws(() => decodeFloats(bytes.toString('base64'), 3, 'noul.U'), /noul\.U has 2 floats, expected 3/);
  });
});

describe('readModelCard', () => {
  it("gives the committed card's title, markdown and per-type evaluation from report.json", async () => {
    const card = await readModelCard(DEFAULT_MODEL_DIR);
    assert.ok(card);
    assert.equal(card.title, `Model card: ${EMBEDDED_MODEL_ID} (alias \`brier-latest\`)`);
    assert.match(card.markdown, /^# Model card: /);
    const report = JSON.parse(readFileSync(join(DEFAULT_MODEL_DIR, 'report.json'), 'utf8')) as ReportFile;
    assert.deepEqual(Object.keys(card.evaluation), ['noul', 'choice', 'score']);
    for (const type of ['noul', 'choice', 'score'] as const) {
      const seen = report.seenAllRowsCrossValidated[type];
      const unseen = report.heldOutTasksShipped[type];
      assert.deepEqual(card.evaluation[type]?.seen?.model, {
        n: seen.model.n,
        accuracy: seen.model.accuracy,
        brier: seen.model.brier,
        ece: seen.model.ece,
      });
      assert.equal(card.evaluation[type]?.seen?.prior?.accuracy, seen.prior.accuracy);
      assert.equal(card.evaluation[type]?.unseen?.uniform?.brier, unseen.uniform.brier);
    }
  });

  it('is null without MODEL_CARD.md', async () => {
    assert.equal(await readModelCard(await folder('none', {})), null);
  });

  it('is a card without numbers when report.json is missing or not JSON', async () => {
    for (const files of [{}, { 'report.json': '{' }] as Record<string, string>[]) {
      const card = await readModelCard(await folder('no-report', { 'MODEL_CARD.md': 'intro\n# My model\n', ...files }));
      assert.deepEqual(card, { title: 'My model', markdown: 'intro\n# My model\n', evaluation: {} });
    }
  });

  it('reads an older report (held-out rows, leave-tasks-out) and turns what is not a finite number into null', async () => {
    const metrics = { n: 10, accuracy: 0.5, brier: null, ece: 'x' };
    const report = { seen: { choice: { model: metrics, prior: 3 } }, leaveTasksOut: { noul: { model: metrics } } };
    const card = await readModelCard(
      await folder('older', { 'MODEL_CARD.md': 'no heading', 'report.json': JSON.stringify(report) }),
    );
    assert.ok(card);
    assert.equal(card.title, 'Model card');
    const read = { n: 10, accuracy: 0.5, brier: null, ece: null };
    assert.deepEqual(card.evaluation, {
      noul: { seen: null, unseen: { model: read, prior: null, uniform: null } },
      choice: { seen: { model: read, prior: null, uniform: null }, unseen: null },
      score: { seen: null, unseen: null },
    });
  });
});
