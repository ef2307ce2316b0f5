/**
 * System One semantics, free of HTTP: turning a validated request into what an engine reads,
 * and an engine's distributions into wire answers (confidence, expected score, rounding).
 */

import { argmax } from '../lib/argmax.ts';
import type { DecisionQuestion, DecisionRequest, Json } from './questions.ts';
import { renderText } from './questions.ts';

export type JsonObject = { [key: string]: Json };

/** A state as it may arrive: text, a JSON object or array, or the Vercel AI SDK's list of parts. */
export type WireState = string | JsonObject | Json[];

export type WireQuestion =
  | {
      type: 'noul';
      instructions?: Json | undefined;
      criteria?: { true?: Json | undefined; false?: Json | undefined } | null | undefined;
    }
  | { type: 'choice'; instructions?: Json | undefined; criteria: Record<string, Json> }
  | { type: 'score'; instructions?: Json | undefined; criteria: Json[] };

export type WireAnswer =
  | { type: 'noul'; noul: number }
  | { type: 'choice'; choice: string; confidence: number; probabilities: Record<string, number> }
  | {
      type: 'score';
      score: number;
      confidence: number;
      legend: Record<string, Json>;
      probabilities: Record<string, number>;
    };

/** Names the System One SDKs send by default; all resolve to the default model. */
export const MODEL_ALIASES = ['brier-latest', 'jev-latest', 'jev-preview'] as const;

/**
 * Unwraps the AI SDK's parts form (`[{type:"text",text}|{type:"json",value}]`) into plain state.
 * Any other array is a JSON array state and is kept as is.
 */
export function unwrapState(state: WireState): string | JsonObject | Json[] {
  if (!Array.isArray(state) || state.length === 0 || !state.every(isPart)) return state;
  const parts = state as Array<{ type: 'text'; text: string } | { type: 'json'; value: Json }>;
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.type === 'text') return only.text;
  if (only?.type === 'json')
    return typeof only.value === 'string' || isStructured(only.value) ? only.value : JSON.stringify(only.value);
  return parts.map((p) => (p.type === 'text' ? p.text : JSON.stringify(p.value))).join('\n\n');
}

function isPart(value: Json): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (value.type === 'text')
    return typeof value.text === 'string' && keys.every((k) => k === 'type' || k === 'text' || k === 'providerOptions');
  if (value.type === 'json')
    return 'value' in value && keys.every((k) => k === 'type' || k === 'value' || k === 'providerOptions');
  return false;
}

function isStructured(value: Json): value is JsonObject | Json[] {
  return typeof value === 'object' && value !== null;
}

export function toDecisionQuestion(q: WireQuestion): DecisionQuestion {
  const instructions = renderText(q.instructions);
  switch (q.type) {
    case 'noul':
      return {
        type: 'noul',
        instructions,
        options: [
          { label: 'false', description: renderText(q.criteria?.false) },
          { label: 'true', description: renderText(q.criteria?.true) },
        ],
      };
    case 'choice':
      return {
        type: 'choice',
        instructions,
        options: Object.entries(q.criteria).map(([label, d]) => ({ label, description: renderText(d) })),
      };
    case 'score':
      return {
        type: 'score',
        instructions,
        options: q.criteria.map((level, i) => ({ label: String(i), description: renderText(level) })),
      };
  }
}

export function toDecisionRequest(state: WireState, questions: WireQuestion[]): DecisionRequest {
  const unwrapped = unwrapState(state);
  return {
    state:
      typeof unwrapped === 'string'
        ? { text: unwrapped, json: undefined }
        : { text: JSON.stringify(unwrapped), json: unwrapped },
    questions: questions.map(toDecisionQuestion),
  };
}

/** Two decimals, half away from zero, as the wire promises. */
export function round2(x: number): number {
  return Math.round((x + Math.sign(x) * Number.EPSILON) * 100) / 100;
}

/** Renormalises an engine's vector; rejects anything that is not a distribution. */
export function normalize(p: number[], expected: number): number[] {
  if (p.length !== expected) throw new Error(`engine returned ${p.length} probabilities for ${expected} options`);
  let sum = 0;
  for (const x of p) {
    if (!Number.isFinite(x) || x < 0) throw new Error(`engine returned a non-probability ${x}`);
    sum += x;
  }
  if (!(sum > 0)) throw new Error('engine returned an all-zero distribution');
  return p.map((x) => x / sum);
}

/** clip((k * pmax - 1) / (k - 1), 0, 1) */
export function choiceConfidence(p: number[]): number {
  const k = p.length;
  const pmax = Math.max(...p);
  return Math.min(1, Math.max(0, (k * pmax - 1) / (k - 1)));
}

/** max(0, 1 - sum_i p_i |i - m| / MADu), m = argmax, MADu = (1/n) sum_i |i - (n-1)/2| */
export function scoreConfidence(p: number[]): number {
  const n = p.length;
  const m = argmax(p);
  let spread = 0;
  let madU = 0;
  for (let i = 0; i < n; i++) {
    spread += (p[i] ?? 0) * Math.abs(i - m);
    madU += Math.abs(i - (n - 1) / 2) / n;
  }
  return Math.max(0, 1 - spread / madU);
}

export function expectedLevel(p: number[]): number {
  return p.reduce((acc, x, i) => acc + i * x, 0);
}

/** Builds the wire answer from unrounded probabilities; rounds only at the end. */
export function toWireAnswer(q: WireQuestion, raw: number[]): WireAnswer {
  switch (q.type) {
    case 'noul': {
      const p = normalize(raw, 2);
      return { type: 'noul', noul: round2(p[1] ?? 0) };
    }
    case 'choice': {
      const labels = Object.keys(q.criteria);
      const p = normalize(raw, labels.length);
      return {
        type: 'choice',
        choice: labels[argmax(p)] ?? '',
        confidence: round2(choiceConfidence(p)),
        probabilities: Object.fromEntries(labels.map((l, i) => [l, round2(p[i] ?? 0)])),
      };
    }
    case 'score': {
      const p = normalize(raw, q.criteria.length);
      return {
        type: 'score',
        score: round2(expectedLevel(p)),
        confidence: round2(scoreConfidence(p)),
        legend: Object.fromEntries(q.criteria.map((level, i) => [String(i), level])),
        probabilities: Object.fromEntries(p.map((x, i) => [String(i), round2(x)])),
      };
    }
  }
}
