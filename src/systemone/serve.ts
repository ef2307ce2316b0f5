/**
 * Serving System One, free of HTTP: one validated request in, the wire response and what it consumed
 * out. Both POST /v1/systemone and the console playground call `serve`.
 */
import { applyHead } from '../engines/adapters/adapter.ts';
import type { EngineHost } from '../engines/host.ts';
import type { Teachers } from '../engines/teachers.ts';
import { fail } from '../lib/errors.ts';
import { clip } from '../lib/json-bounds.ts';
import type { AdapterResolver, ServedAdapter } from './adapters.ts';
import { toWireAnswer } from './answers.ts';
import { MODEL_ALIASES } from './models.ts';
import { toDecisionRequest } from './normalize.ts';
import type { SystemOneRequest, SystemOneResponse, WireAnswer, WireQuestion } from './protocol.ts';
import { fromCanonical, templateOf, toCanonical } from './templates.ts';

/** What one answered request consumed of the model, as usage metering records it. */
export interface Consumption {
  model: string;
  questions: number;
  inputTokens: number;
  outputTokens: number;
  /** Calls made to a teacher for this request (an adapter's fallback), counted apart. */
  teacherCalls?: number;
}

/**
 * Brier's response header naming the abstained question ids: each percent-encoded (a lone surrogate
 * as U+FFFD), comma-separated,
 * up to ABSTAINED_HEADER_MAX characters; `*` when they do not all fit (the answers' `x_abstained`
 * flags then say which). Absent when no answer abstained.
 */
export const ABSTAINED_HEADER = 'x-brier-abstained';
export const ABSTAINED_HEADER_MAX = 2048;

/** The value of ABSTAINED_HEADER for a response, or undefined when no answer abstained. */
export function abstainedHeader(response: SystemOneResponse): string | undefined {
  const ids = Object.entries(response.answers).flatMap(([id, a]) =>
    a.x_abstained ? [encodeURIComponent(id.replace(/\p{Cs}/gu, '\uFFFD'))] : [],
  );
  if (ids.length === 0) return undefined;
  const value = ids.join(',');
  return value.length <= ABSTAINED_HEADER_MAX ? value : '*';
}

export interface SystemOneOptions {
  /** The accounts' adapters (absent: only the base model is served). */
  adapters?: AdapterResolver | undefined;
  /**
   * BRIER_LEGACY_EXTENSION_FIELDS: every answer also carries the extensions under their names before
   * 0.2.0 (`abstained`, `answered_by`) next to `x_abstained` and `x_answered_by`. Default false.
   */
  legacyExtensionFields?: boolean | undefined;
  /** The configured teachers, for adapters that fall back to theirs (issue 34). */
  teachers?: Teachers | undefined;
  /** Told when a fallback's teacher failed (the adapter's answer is served then). */
  onTeacherError?: ((error: unknown, teacher: string) => void) | undefined;
  /**
   * Told when an adapter's fallback names a teacher this server does not have (BRIER_TEACHERS changed
   * since it was set) and some of its answers were unsure: the adapter's answers are served.
   */
  onTeacherMissing?: ((teacher: string, adapter: string) => void) | undefined;
}

/** The `x_answered_by` of an answer given by a teacher in an adapter's place. */
export const teacherModel = (id: string) => `teacher:${id}`;

/**
 * An answer's confidence as its fallback reads it: choice and score their wire `confidence`; a noul
 * |2p - 1| (the choice formula for two options).
 */
export function answerConfidence(answer: WireAnswer): number {
  if (answer.type === 'noul') return Math.abs(2 * (answer.noul ?? 0.5) - 1);
  return answer.confidence ?? 0;
}

/** An answer with the deprecated unprefixed copies of its extensions (BRIER_LEGACY_EXTENSION_FIELDS). */
function withLegacyNames(answer: WireAnswer): WireAnswer {
  return {
    ...answer,
    abstained: answer.x_abstained,
    ...(answer.x_answered_by === undefined ? {} : { answered_by: answer.x_answered_by }),
  };
}

/** Who is asking: an account's adapters are model ids for that account only. */
export interface ServeContext {
  account?: string | undefined;
}

export function createSystemOne(host: EngineHost, options: SystemOneOptions = {}) {
  const { engine } = host;

  function isBase(requested: string | undefined): boolean {
    return (
      requested === undefined ||
      requested === engine.info.id ||
      (MODEL_ALIASES as readonly string[]).includes(requested)
    );
  }

  function unknownModel(requested: string): Error {
    // An adapter id names the base model it was fitted on (ft:<base>:<hex>): where that is not the model
    // served here (an older release), say so. Read from the id alone, so it tells nothing of whether
    // such an adapter exists, in this account or another.
    const base = /^ft:(.+):[0-9a-f]{12}$/.exec(requested)?.[1];
    const retrain =
      base && base !== engine.info.id
        ? `: it is an adapter of ${clip(base, 64)} and this server runs ${engine.info.id}; fit it again (POST /control/v1/training-jobs on the same examples) to serve it`
        : `; use brier-latest or ${engine.info.id}`;
    return fail('UNKNOWN_MODEL', `model ${JSON.stringify(clip(requested, 128))} is not served here${retrain}`);
  }

  function resolveModel(requested: string | undefined): string {
    if (isBase(requested)) return engine.info.id;
    throw unknownModel(requested ?? '');
  }

  /**
   * The adapter a request names, for its account; undefined for the base model. Any other name, an
   * adapter of another account included, is the same unknown model.
   */
  async function resolveAdapter(
    requested: string | undefined,
    context: ServeContext,
  ): Promise<ServedAdapter | undefined> {
    if (isBase(requested)) return undefined;
    const adapter =
      requested && context.account && options.adapters
        ? await options.adapters.find(context.account, requested)
        : undefined;
    if (!adapter) throw unknownModel(requested ?? '');
    return adapter;
  }

  /** Resolves the model, asks the engine's host, applies the adapter where a question matches it, and shapes the answers. */
  async function serve(
    body: SystemOneRequest,
    signal?: AbortSignal,
    context: ServeContext = {},
  ): Promise<{ response: SystemOneResponse; consumed: Consumption }> {
    const adapter = await resolveAdapter(body.model, context);
    const model = adapter ? adapter.id : engine.info.id;
    const ids = Object.keys(body.questions);
    const wire = ids.map((id) => body.questions[id] as WireQuestion);
    const request = toDecisionRequest(body.state, wire);
    // A probe head reads the state's features: asked beside the answer, so that an encoding the
    // answer does not share (MiniLM, where no question of the engine's reads it) runs on the other
    // core at the same time. Not under overload: a request the queue refuses costs no encoding.
    // Only the features the heads read: a head fitted on USE-lite's part alone costs no MiniLM.
    const features = engine.features;
    // each question's head, its template id hashed once (none without an adapter)
    const heads = wire.map((q) => adapter?.heads.get(templateOf(q).id));
    const dims = Math.max(0, ...heads.map((h) => (h?.weights ? h.dim : 0)));
    let early: Promise<Float32Array> | undefined;
    if (adapter && features && dims > 0) {
      try {
        host.scheduler.admit();
        early = features.state(request, signal, dims);
        early.catch(() => {});
      } catch {
        // refused by host.answer below, with its reason
      }
    }
    const result = await host.answer(request, ids, signal);
    const answers: Record<string, WireAnswer> = {};
    /** Adapter answers under the fallback's threshold: asked of the teacher after the loop. */
    const unsure: number[] = [];
    let state: Float32Array | null | undefined;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as string;
      const question = wire[i] as WireQuestion;
      const base = result.probabilities[i] ?? [];
      const head = heads[i];
      let answer: WireAnswer;
      if (adapter && head) {
        // The state features are read once, and only when a probe head needs them.
        if (head.weights && state === undefined)
          state = features ? await (early ?? features.state(request, signal, dims)) : null;
        const p = fromCanonical(
          question,
          applyHead(head, toCanonical(question, base), head.weights ? (state ?? null) : null),
        );
        answer = { ...toWireAnswer(question, p), x_answered_by: adapter.id };
        if (adapter.fallback && answerConfidence(answer) < adapter.fallback.threshold) unsure.push(i);
      } else {
        answer = adapter
          ? { ...toWireAnswer(question, base), x_answered_by: engine.info.id }
          : toWireAnswer(question, base);
      }
      answers[id] = answer;
    }
    // Opt-in fallback (issue 34): the unsure answers asked of the adapter's teacher, in one call.
    let teacherCalls = 0;
    const fallback = adapter?.fallback;
    const teacher = fallback ? options.teachers?.get(fallback.teacher) : undefined;
    if (fallback && !teacher && unsure.length > 0) options.onTeacherMissing?.(fallback.teacher, model);
    if (fallback && teacher && unsure.length > 0) {
      teacherCalls = 1;
      try {
        const asked = unsure.map((i) => wire[i] as WireQuestion);
        // A live request: one retry at most (a failed teacher leaves the adapter's answers).
        const taught = await teacher.ask(toDecisionRequest(body.state, asked), signal, { retries: 1 });
        unsure.forEach((i, j) => {
          answers[ids[i] as string] = {
            ...toWireAnswer(asked[j] as WireQuestion, taught.probabilities[j] ?? []),
            x_answered_by: teacherModel(teacher.id),
          };
        });
      } catch (error) {
        if (signal?.aborted) throw error;
        options.onTeacherError?.(error, teacher.id);
      }
    }
    if (options.legacyExtensionFields) for (const id of ids) answers[id] = withLegacyNames(answers[id] as WireAnswer);
    const usage = { input_tokens: result.inputTokens, output_tokens: result.outputTokens };
    return {
      response: { model, answers, usage },
      consumed: {
        model,
        questions: ids.length,
        inputTokens: usage.input_tokens,
        outputTokens: usage.output_tokens,
        teacherCalls,
      },
    };
  }

  return { serve, resolveModel, engine };
}

export type SystemOne = ReturnType<typeof createSystemOne>;
