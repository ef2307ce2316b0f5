/**
 * What the "teach Brier your task" routes share (issue 23): labelled examples, and later retention,
 * outcomes, training jobs and adapters. Built once in src/services.ts and handed to both sub-apps.
 */
import type { ExampleStore } from '../domain/examples.ts';

export interface TeachDeps {
  examples: ExampleStore;
}
