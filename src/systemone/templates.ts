/**
 * Question templates: what makes two System One questions "the same question" for labelled examples
 * and adapters. A template is a question's type, instructions and criteria (its id is never part of
 * it); choice labels are a set, so their order does not matter. Pure, no HTTP.
 */
import { createHash } from 'node:crypto';
import type { WireQuestion } from './protocol.ts';

/** Compact JSON with every object's keys sorted (arrays keep their order). Only for JSON-safe values. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export interface Template {
  /** `tpl_` + 20 hex characters of the SHA-256 of the canonical form. */
  id: string;
  type: WireQuestion['type'];
  /** The question in canonical JSON (what the template id hashes). */
  canonical: string;
  /**
   * The template's classes in canonical order: noul `false`, `true`; choice the labels sorted;
   * score the level indices `0`..`n-1`. Labels, adapters and metrics use this order.
   */
  labels: string[];
}

/** The question reduced to what defines its template: absent instructions or criteria are null. */
function templateForm(q: WireQuestion): unknown {
  const criteria = q.type === 'noul' ? (q.criteria ?? null) : q.criteria;
  return { type: q.type, instructions: q.instructions ?? null, criteria };
}

export function templateOf(q: WireQuestion): Template {
  const canonical = canonicalJson(templateForm(q));
  const id = `tpl_${createHash('sha256').update(canonical).digest('hex').slice(0, 20)}`;
  return { id, type: q.type, canonical, labels: templateLabels(q) };
}

/** The classes of a question in canonical order (see Template.labels). */
export function templateLabels(q: WireQuestion): string[] {
  switch (q.type) {
    case 'noul':
      return ['false', 'true'];
    case 'choice':
      return Object.keys(q.criteria).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    case 'score':
      return q.criteria.map((_, i) => String(i));
  }
}

/** The labels of a question in the order its answer vector uses (the engine's option order). */
export function answerLabels(q: WireQuestion): string[] {
  return q.type === 'choice' ? Object.keys(q.criteria) : templateLabels(q);
}

/** For each canonical class, its position in the answer vector. */
export function canonicalOrder(q: WireQuestion): number[] {
  const order = answerLabels(q);
  const at = new Map(order.map((l, i) => [l, i]));
  return templateLabels(q).map((l) => at.get(l) ?? 0);
}

/** An answer vector (option order) in canonical class order. */
export function toCanonical(q: WireQuestion, p: readonly number[]): number[] {
  return canonicalOrder(q).map((i) => p[i] ?? 0);
}

/** A canonical-order vector back in the question's option order. */
export function fromCanonical(q: WireQuestion, p: readonly number[]): number[] {
  const order = canonicalOrder(q);
  const out = new Array<number>(order.length).fill(0);
  order.forEach((i, c) => {
    out[i] = p[c] ?? 0;
  });
  return out;
}
