import type { Json } from '../../domain/questions.ts';

/**
 * Renders a JSON state as readable `path: value` lines, the form a sentence encoder reads best:
 * `{"user":{"name":"Ada"},"turns":["hi","bye"]}` becomes
 * `user.name: Ada` / `turns[0]: hi` / `turns[1]: bye`. Strings are verbatim (never truncated),
 * other scalars as JSON, empty containers as `[]` / `{}`. A bare string renders as itself.
 */
export function flattenState(value: Json): string {
  if (typeof value === 'string') return value;
  const lines: string[] = [];
  walk(value, '', lines);
  return lines.join('\n');
}

function walk(value: Json, path: string, out: string[]): void {
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
