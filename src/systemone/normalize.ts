/**
 * A validated System One request in the form engines read: the state unwrapped and rendered, each
 * question's texts rendered and its options listed in answer order (ids stay behind: the model
 * never sees them).
 */
import { type DecisionQuestion, type DecisionRequest, type Json, renderText } from '../engines/request.ts';
import type { WireQuestion, WireState } from './protocol.ts';

type JsonObject = { [key: string]: Json };

/**
 * Unwraps the AI SDK's parts form (`[{type:"text",text}|{type:"json",value}]`) into plain state.
 * Any other array is a JSON array state and is kept as is.
 */
export function unwrapState(state: WireState): string | JsonObject | Json[] {
  // The body was parsed from JSON text: every value in it is JSON.
  const json = state as string | JsonObject | Json[];
  if (!Array.isArray(json) || json.length === 0 || !json.every(isPart)) return json;
  const parts = json as Array<{ type: 'text'; text: string } | { type: 'json'; value: Json }>;
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
