/**
 * Drives the bench through `POST /v1/systemone`: either a running server (`fetch`) or the real
 * app in-process (`app.request`). Wire answers are rounded to 0.01 by the protocol; a 0.00 is
 * read as 0.0025 (the middle of [0, 0.005)) and each vector is renormalized, so NLL measures the
 * model rather than the rounding.
 */
import { fromWire } from '../../src/training/evaluation.ts';
import type { AnswerFn, BenchQuestion } from './core.ts';

export type RequestFn = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string },
) => Promise<Response>;

interface WireAnswer {
  type: string;
  noul?: number;
  probabilities?: Record<string, number>;
}

export function createHttpAnswer(request: RequestFn, apiKey: string): AnswerFn {
  return async (state, questions) => {
    const map: Record<string, BenchQuestion> = {};
    questions.forEach((q, i) => {
      map[`q${i}`] = q;
    });
    const res = await request('/v1/systemone', {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ state, questions: map }),
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
    const body = (await res.json()) as { answers: Record<string, WireAnswer> };
    return questions.map((q, i) => {
      const a = body.answers[`q${i}`];
      if (!a) throw new Error(`missing answer q${i}`);
      let p: number[];
      if (q.type === 'noul') {
        const t = a.noul ?? Number.NaN;
        p = [1 - t, t];
      } else if (q.type === 'choice') {
        const labels = q.criteria && !Array.isArray(q.criteria) ? Object.keys(q.criteria) : [];
        p = labels.map((l) => a.probabilities?.[l] ?? Number.NaN);
      } else {
        const n = Array.isArray(q.criteria) ? q.criteria.length : 0;
        p = Array.from({ length: n }, (_, j) => a.probabilities?.[String(j)] ?? Number.NaN);
      }
      if (p.some((v) => !Number.isFinite(v))) throw new Error(`malformed answer q${i}`);
      return fromWire(p);
    });
  };
}

/** A RequestFn for a running server at baseUrl. */
export function fetchRequest(baseUrl: string): RequestFn {
  return (url, init) => fetch(new URL(url, baseUrl), init);
}
