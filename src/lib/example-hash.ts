import { createHash } from 'node:crypto';

/**
 * What makes an uploaded labelled question the same as one stored before: its template, its state
 * (compact JSON) and its label, as a SHA-256 (hex). Uploads store it, so that an upload repeated
 * stores nothing new (src/domain/examples.ts; migration 0013 computes it for older rows).
 */
export function exampleHash(templateId: string, state: string, label: string): string {
  return createHash('sha256')
    .update(JSON.stringify([templateId, state, label]))
    .digest('hex');
}
