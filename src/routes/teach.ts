/**
 * What the "teach Brier your task" routes share (issue 23): labelled examples, and later retention,
 * outcomes, training jobs and adapters. Built once in src/services.ts and handed to both sub-apps.
 */
import type { ExampleStore } from '../domain/examples.ts';
import type { Outcomes } from '../domain/outcomes.ts';
import type { Retention } from '../domain/retention.ts';

export interface TeachDeps {
  examples: ExampleStore;
  retention: Retention;
  outcomes: Outcomes;
}
