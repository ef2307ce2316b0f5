/**
 * Observed outcomes of past decisions: the true label of one question of a retained request, given
 * by its request id (the response's x-request-id) and question id, becomes a labelled example of the
 * question's template. Without retention nothing of the request was kept, and the refusal says so.
 */
import { fail, invalidField } from '../lib/errors.ts';
import { clip } from '../lib/json-bounds.ts';
import { canonicalLabel } from '../systemone/examples.ts';
import type { WireAnswer, WireQuestion } from '../systemone/protocol.ts';
import { templateLabels, templateOf } from '../systemone/templates.ts';
import type { ExampleStore } from './examples.ts';
import type { Retention } from './retention.ts';

export interface Outcome {
  requestId: string;
  questionId: string;
  /** noul true/false, choice a label, score a level index (or its text). */
  label: unknown;
}

export interface RecordedOutcome {
  exampleId: string;
  templateId: string;
  /** The canonical label stored. */
  label: string;
  /** An earlier outcome of the same request and question was corrected. */
  replaced: boolean;
}

export function createOutcomes(deps: { retention: Retention; examples: ExampleStore }) {
  async function record(userId: string, outcome: Outcome): Promise<RecordedOutcome> {
    const id = JSON.stringify(clip(outcome.requestId, 64));
    const retained = await deps.retention.find(userId, outcome.requestId);
    if (!retained) {
      const policy = await deps.retention.policy(userId);
      if (policy.account === null && Object.keys(policy.keys).length === 0) {
        throw fail(
          'RETENTION_OFF',
          `request_id: the content of request ${id} was not kept, so an outcome cannot be linked to it: request retention is off for this account and all its keys (the default). Turn it on with PUT /control/v1/retention; it applies to requests made after that`,
        );
      }
      throw fail(
        'NOT_FOUND',
        `request_id: no retained request ${id} in this account (requests are kept only when made with a key whose retention is on, from then on and for its period)`,
      );
    }
    const questions = JSON.parse(retained.questions) as Record<string, WireQuestion>;
    const question = Object.hasOwn(questions, outcome.questionId) ? questions[outcome.questionId] : undefined;
    if (!question) {
      throw fail(
        'NOT_FOUND',
        `question_id: request ${id} has no question ${JSON.stringify(clip(outcome.questionId, 128))}`,
      );
    }
    const label = canonicalLabel(question, outcome.label);
    // The same refusal as an upload's bad label (422, at the field), never a 400 (issue 41).
    if ('error' in label) throw invalidField(['label'], 'value_error', label.error, outcome.label);
    const template = templateOf(question);
    const answers = JSON.parse(retained.answers) as Record<string, WireAnswer>;
    const answer = Object.hasOwn(answers, outcome.questionId) ? answers[outcome.questionId] : undefined;
    const stored = await deps.examples.addOutcome(userId, {
      served: answer ? servedVector(question, answer) : null,
      // Answers retained before 0.2.0 carry the extension's unprefixed name.
      servedBy: answer?.x_answered_by ?? answer?.answered_by ?? retained.model,
      templateId: template.id,
      type: template.type,
      question: template.canonical,
      state: retained.state,
      label: label.label,
      requestId: outcome.requestId,
      questionId: outcome.questionId,
    });
    return { exampleId: stored.id, templateId: template.id, label: label.label, replaced: stored.replaced };
  }

  return { record };
}

/** The probabilities a served answer gave, in the template's canonical class order (as served: rounded). */
export function servedVector(question: WireQuestion, answer: WireAnswer): number[] | null {
  if (answer.type === 'noul') return [1 - answer.noul, answer.noul];
  if (answer.type === 'choice' || answer.type === 'score') {
    const p = templateLabels(question).map((l) => answer.probabilities[l] ?? 0);
    const sum = p.reduce((a, b) => a + b, 0);
    return sum > 0 ? p.map((x) => x / sum) : null;
  }
  return null;
}

export type Outcomes = ReturnType<typeof createOutcomes>;
