import { fail } from '../../lib/errors.ts';
import type { Json } from '../request.ts';

/**
 * Renders a JSON state as readable `path: value` lines, the form a sentence encoder reads best:
 * `{"user":{"name":"Ada"},"turns":["hi","bye"]}` becomes
 * `user.name: Ada` / `turns[0]: hi` / `turns[1]: bye`. Strings are verbatim (never truncated),
 * other scalars as JSON, empty containers as `[]` / `{}`. A bare string renders as itself.
 *
 * Every line repeats its path, so deep, wide documents render far longer than their JSON: past
 * `maxChars` characters the rendering stops with a max_tokens refusal instead of growing on.
 */
export function flattenState(value: Json, maxChars = Number.POSITIVE_INFINITY): string {
  if (typeof value === 'string') return value;
  const lines: string[] = [];
  const out = {
    chars: 0,
    push(line: string) {
      this.chars += line.length + 1;
      if (this.chars > maxChars + 1) {
        throw fail(
          'MAX_TOKENS',
          `state: read as path: value lines it is over ${maxChars} characters, the limit for this model`,
        );
      }
      lines.push(line);
    },
  };
  walk(value, '', out);
  return lines.join('\n');
}

interface Lines {
  push(line: string): void;
}

function walk(value: Json, path: string, out: Lines): void {
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push(`${path || '(root)'}: []`);
      return;
    }
    value.forEach((item, i) => {
      walk(item, `${path}[${i}]`, out);
    });
    return;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) {
      out.push(`${path || '(root)'}: {}`);
      return;
    }
    for (const key of keys) {
      const child = value[key];
      if (child === undefined) continue;
      walk(child, path ? `${path}.${key}` : key, out);
    }
    return;
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  out.push(path ? `${path}: ${text}` : text);
}
