/**
 * The engine-facing form of a System One request: ids stripped, structured text rendered,
 * options listed in a fixed order. Pure data, no HTTP types.
 */

/** A JSON value as it arrives on the wire. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** One option of a question, as the engine sees it. */
export interface DecisionOption {
  /** The caller's label (choice), "true"/"false" (noul) or the level index (score). */
  label: string;
  /** The description in text form, or null when the caller gave none. */
  description: string | null;
}

export interface DecisionQuestion {
  type: 'noul' | 'choice' | 'score';
  /** The instructions in text form (structured instructions as compact JSON), or null. */
  instructions: string | null;
  /**
   * The options in answer order. noul: [false, true]; choice: the caller's labels in the
   * caller's order; score: levels lowest first.
   */
  options: DecisionOption[];
}

export interface DecisionState {
  /** The state as the engine reads it: strings verbatim, objects and arrays as compact JSON. */
  text: string;
  /** The parsed structure when the caller sent an object or array (engines may render it their own way). */
  json: Json | undefined;
}

export interface DecisionRequest {
  state: DecisionState;
  questions: DecisionQuestion[];
}

/** Renders a structured value the way engines read it: strings verbatim, everything else compact JSON. */
export function renderText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
