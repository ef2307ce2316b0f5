import { z } from '@hono/zod-openapi';

const Metrics = z
  .object({
    n: z.number().int(),
    nHard: z.number().int(),
    accuracy: z.number(),
    brier: z.number().openapi({ description: 'CalDec Brier: the sum over options of (p - t)^2, divided by k.' }),
    nll: z.number(),
    ece: z.number().openapi({ description: 'Expected calibration error, 15 equal-width bins on the top probability.' }),
    scoreMae: z.number().nullable(),
    eceFloor: z.number().optional().openapi({
      description:
        'The ECE a perfectly calibrated model shows by chance at these confidences and n (200 seeded draws).',
    }),
  })
  .openapi('HeldOutMetrics');

const TeacherAgreement = z
  .object({
    agreement: z
      .number()
      .openapi({ description: "Share of held-out states whose most likely answer is the teacher's." }),
    brier: z.number().openapi({ description: "CalDec Brier against the teacher's distribution." }),
    kl: z.number().openapi({ description: 'Mean KL(teacher || model), nats.' }),
    ece: z
      .number()
      .openapi({ description: "ECE of the top probability against agreement with the teacher's argmax (15 bins)." }),
    accuracy: z
      .number()
      .nullable()
      .openapi({ description: 'Accuracy against the true labels of held-out states (null: none labelled).' }),
  })
  .openapi('TeacherAgreement');

const DistillReport = z
  .object({
    teacher: z.string(),
    nTest: z.number().int().openapi({ description: 'Held-out states (25%), never fitted on.' }),
    nTruth: z.number().int().openapi({ description: 'Of them, states the account labelled.' }),
    nHuman: z.number().int().openapi({ description: 'True labels in the fit.' }),
    humanWeight: z.number().openapi({ description: "Their weight against the teacher's 1." }),
    base: TeacherAgreement,
    adapter: TeacherAgreement.nullable(),
    teacherAccuracy: z
      .number()
      .nullable()
      .openapi({ description: "The teacher's own accuracy on the same held-out states." }),
  })
  .openapi('DistillReport');

export const ReliabilityBin = z
  .object({ lo: z.number(), hi: z.number(), n: z.number().int(), confidence: z.number(), accuracy: z.number() })
  .openapi('ReliabilityBin');

export const TemplateReport = z
  .object({
    template: z.string(),
    type: z.string(),
    labels: z.array(z.string()),
    n: z.number().int().openapi({ description: 'Labelled examples of the template.' }),
    nTrain: z.number().int().openapi({ description: 'Examples the served head is fitted on (all of them).' }),
    nTest: z.number().int().openapi({
      description: 'Examples measured, each answered by a fit that never saw it (cross-fitting, 5 folds).',
    }),
    kind: z.string().nullable().openapi({ description: 'probe (a head on the state embedding) or calibration.' }),
    served: z.boolean(),
    reason: z.string(),
    before: Metrics.nullable().openapi({ description: 'The base model on the examples measured (nTest).' }),
    after: Metrics.nullable().openapi({ description: 'The adapter, cross-fitted, on the examples measured (nTest).' }),
    prior: Metrics.nullable().openapi({
      description: "The training labels' frequencies on the examples measured (a reference).",
    }),
    reliability: z
      .object({ before: z.array(ReliabilityBin), after: z.array(ReliabilityBin).nullable() })
      .nullable()
      .openapi({ description: 'Reliability diagrams on the examples measured: 15 bins of the top probability.' }),
    candidates: z.array(z.object({ name: z.string(), nll: z.number() })),
    chosen: z.string().nullable().optional().openapi({
      description:
        'The candidate fitted and measured, by its name in candidates (e.g. "probe (L2 0.003)", "shrinkage LDA (gamma 0.9)"); null when none was; absent in reports of jobs that ran before it was reported.',
    }),
    seconds: z.number(),
    distill: DistillReport.optional().openapi({
      description:
        'Distillation jobs: held-out measures against the teacher (before/after above are against it too), and accuracy against the truth where the account labelled held-out states.',
    }),
  })
  .openapi('TemplateReport');

export const TrainingJob = z
  .object({
    id: z.string().openapi({ example: 'job_0f3c...' }),
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    progress: z.number().openapi({ description: '0 to 1.' }),
    stage: z.string(),
    message: z.string(),
    templates: z.array(z.string()).nullable(),
    adapter_id: z.string().nullable(),
    attempts: z
      .number()
      .int()
      .openapi({ description: 'Runs that failed (its process died, or an error); waits for the engine do not count.' }),
    examples: z.number().int().openapi({ description: 'Labelled examples it reads.' }),
    queue_position: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'While queued: 1 is the next job to start (accounts take turns). Otherwise null.' }),
    estimated_seconds: z.number().int().nullable().openapi({
      description:
        "While queued or running: seconds until it should be done, from the throughput measured on recent jobs (a distillation job's own part: its teacher calls left, at the teacher's time per call measured when it started or, if unmeasured then, since); null while that is unknown (before any job was measured, a distillation job whose teacher has not answered yet, or a job queued behind one), and once it has ended.",
    }),
    kind: z.enum(['adapter', 'distill']).openapi({
      description:
        "adapter: fitted on labelled examples; distill: learnt from a teacher's answers (POST /control/v1/distillation-jobs).",
    }),
    teacher_calls: z.number().int().openapi({ description: 'Distillation jobs: calls made to the teacher so far.' }),
    distill: z
      .object({
        teacher: z.string(),
        source: z.enum(['states', 'retained']),
        budget: z.number().int().openapi({ description: 'Teacher calls it may make at most.' }),
        concurrency: z.number().int(),
        human_weight: z.number(),
        fallback_threshold: z.number().nullable(),
        estimate: z
          .unknown()
          .optional()
          .openapi({ description: 'The estimate shown before it was queued (DistillEstimate).' }),
      })
      .nullable()
      .openapi({ description: 'Distillation jobs: the teacher, the source of states and the call budget.' }),
    not_before: z
      .string()
      .nullable()
      .openapi({ format: 'date-time', description: 'A job waiting for the engine is not started before this.' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    started_at: z.string().nullable().openapi({ format: 'date-time' }),
    finished_at: z.string().nullable().openapi({ format: 'date-time' }),
    result: z
      .object({
        base: z.string(),
        templates: z.array(TemplateReport),
        timing: z
          .object({
            reading_s: z.number(),
            fitting_s: z.number(),
            examples: z.number().int(),
            states: z.number().int(),
          })
          .optional()
          .openapi({
            description:
              'Where the run went: seconds reading the examples with the base model (distinct states read), and seconds fitting.',
          }),
      })
      .nullable()
      .openapi({ description: 'Per template: held-out metrics before and after, reliability, served or not and why.' }),
  })
  .openapi('TrainingJob');

export const TrainingJobList = z.object({ data: z.array(TrainingJob) }).openapi('TrainingJobList');

export const CreateTrainingJob = z
  .object({
    templates: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(50)
      .optional()
      .openapi({ description: 'Template ids to fit; absent: every template with at least 20 examples.' }),
  })
  .strict()
  .openapi('CreateTrainingJob');

export const JobIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'job_0f3c...' }),
});
