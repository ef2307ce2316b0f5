/**
 * The words of the GGUF engine's prompts. As plain text (no chat template, so any base or instruct model
 * reads them) or, through frames.ts, inside the model's chat template (BRIER_GGUF_PROMPT=chat).
 * The state prompt is a prefix evaluated once per request; each question prompt is a suffix read on
 * top of it and ends with ANSWER_CUE, after which the option labels are scored (see labels.ts).
 */
import type { DecisionQuestion, DecisionState } from '../request.ts';

/** The last text of every question prompt; labels are scored as " <label>" after it. */
export const ANSWER_CUE = 'Answer:';

export function renderStatePrompt(state: DecisionState): string {
  return `Read the state, then answer the question after it with the label of one option.\n\nState:\n${state.text}\n\n`;
}

/** The labels a question type would naturally use, one per option (null: use generic labels). */
export function naturalLabels(question: DecisionQuestion): string[] | null {
  switch (question.type) {
    case 'noul':
      return question.options.length === 2 ? ['No', 'Yes'] : null;
    case 'score':
      return question.options.map((option) => option.label);
    case 'choice':
      return null;
  }
}

/**
 * The question suffix; `labels` are the ones planLabels picked, one per option in option order. It ends
 * with `cue` (plain prompts), or, with no cue (a chat turn the reply answers), asks for one label.
 */
export function renderQuestionPrompt(
  question: DecisionQuestion,
  labels: readonly string[],
  cue: string | null = ANSWER_CUE,
): string {
  const lines = [`Question: ${question.instructions ?? defaultInstructions(question)}`];
  const options = question.options;
  if (question.type === 'noul' && options.length === 2) {
    const [no, yes] = labels;
    if (options[1]?.description != null) lines.push(`${yes} means: ${options[1].description}`);
    if (options[0]?.description != null) lines.push(`${no} means: ${options[0].description}`);
    lines.push(`Reply ${yes} or ${no}.`);
  } else if (question.type === 'score') {
    lines.push(`Scale: ${labels[0]} (lowest) to ${labels[labels.length - 1]} (highest).`);
    options.forEach((option, i) => {
      if (option.description !== null) lines.push(`${labels[i]}: ${option.description}`);
    });
  } else {
    lines.push('Options:');
    options.forEach((option, i) => {
      lines.push(`${labels[i]}. ${option.label}${option.description === null ? '' : `: ${option.description}`}`);
    });
  }
  if (cue !== null) lines.push(cue);
  else if (question.type !== 'noul' || options.length !== 2) lines.push('Reply with the label of one option only.');
  return lines.join('\n');
}

function defaultInstructions(question: DecisionQuestion): string {
  switch (question.type) {
    case 'noul':
      return 'Is this true of the state?';
    case 'score':
      return 'Rate the state.';
    case 'choice':
      return 'Which option fits the state best?';
  }
}
