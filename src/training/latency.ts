/** Latency of one realistic request through the real engine (worker pool, cache), for the model card. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CalibrationFile, LatencyReport, WeightsFile, ZeroShotFile } from '../engines/embedded/artifacts.ts';
import { createEmbeddedEngine } from '../engines/embedded/index.ts';
import { createEncoderTokenizer } from '../engines/embedded/tokenizer.ts';
import type { DecisionRequest } from '../engines/request.ts';

export type { LatencyReport };

const PARAGRAPH =
  'Hi team, following up on the outage from last night. Around 02:10 UTC the payment service started returning ' +
  'timeouts for roughly a third of checkout requests. The on-call engineer rolled back the deploy from 01:45, but ' +
  'the error rate only dropped after the database connection pool was resized. Customers in the EU region were the ' +
  'most affected, and support received about forty tickets, several of them asking for refunds for duplicate ' +
  'charges. We still do not know whether the duplicate charges were caused by client retries or by the payment ' +
  'provider. Finance wants a list of affected orders by Friday, and legal asked whether we need to notify anyone. ' +
  'Can someone own the postmortem, and can we agree on a retry policy before the next release? I would also like ' +
  'a dashboard that shows pool saturation next to the error rate, because that would have saved us an hour. ' +
  'Marketing also asked whether the status page should mention the refunds, and two enterprise customers want a ' +
  'written summary with a timeline before their renewal calls next week. ' +
  'Thanks, and sorry for the long message; it has been a long night for everyone involved.';

export function latencyRequest(i: number, questionSalt = ''): DecisionRequest {
  const text = `Message ${i} from the incident channel.\n${PARAGRAPH}`;
  return {
    state: { text, json: undefined },
    questions: [
      {
        type: 'noul',
        instructions: `Does the author ask for help from someone?${questionSalt}`,
        options: [
          { label: 'false', description: null },
          { label: 'true', description: null },
        ],
      },
      {
        type: 'choice',
        instructions: `Which team should handle this message?${questionSalt}`,
        options: [
          { label: 'engineering', description: 'software, outages, deploys' },
          { label: 'finance', description: 'payments, refunds, invoices' },
          { label: 'legal', description: 'compliance and notifications' },
          { label: 'support', description: 'customer tickets' },
        ],
      },
      {
        type: 'score',
        instructions: `How urgent is this message?${questionSalt}`,
        options: ['not urgent', 'low', 'medium', 'high', 'critical'].map((d, j) => ({
          label: String(j),
          description: d,
        })),
      },
    ],
  };
}

function pct(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

export async function measureLatency(
  _outDir: string,
  weights: WeightsFile,
  calibration: CalibrationFile,
  zeroShot: ZeroShotFile | null,
  log: (m: string) => void,
  runs = 50,
): Promise<LatencyReport> {
  const dir = mkdtempSync(join(tmpdir(), 'brier-lite-'));
  try {
    writeFileSync(join(dir, 'weights.json'), JSON.stringify(weights));
    writeFileSync(join(dir, 'calibration.json'), JSON.stringify(calibration));
    if (zeroShot) writeFileSync(join(dir, 'zeroshot.json'), JSON.stringify(zeroShot));
    return await measureEngineLatency(dir, log, runs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function measureEngineLatency(
  modelDir: string | undefined,
  log: (m: string) => void,
  runs = 50,
): Promise<LatencyReport> {
  const engine = createEmbeddedEngine(modelDir ? { modelDir } : {});
  const t0 = performance.now();
  await engine.load();
  const loadMs = performance.now() - t0;
  const signal = new AbortController().signal;
  const time = async (req: DecisionRequest): Promise<number> => {
    const t = performance.now();
    await engine.answer(req, signal);
    return performance.now() - t;
  };
  // warm-up
  for (let i = 0; i < 3; i++) await time(latencyRequest(-1 - i));
  const cached: number[] = [];
  for (let i = 0; i < runs; i++) cached.push(await time(latencyRequest(0)));
  const fresh: number[] = [];
  for (let i = 0; i < runs; i++) fresh.push(await time(latencyRequest(1000 + i)));
  const cold: number[] = [];
  for (let i = 0; i < Math.min(20, runs); i++) cold.push(await time(latencyRequest(5000 + i, ` (#${i})`)));
  await engine.close();
  const stateTokens = createEncoderTokenizer().count(latencyRequest(0).state.text);
  const r: LatencyReport = {
    runs,
    stateTokens,
    loadMs,
    cachedP50: pct(cached, 0.5),
    cachedP90: pct(cached, 0.9),
    newStateP50: pct(fresh, 0.5),
    newStateP90: pct(fresh, 0.9),
    coldP50: pct(cold, 0.5),
  };
  log(`latency: ${JSON.stringify(r)}`);
  return r;
}
