/**
 * Bounds on parsed JSON that are checked before anything walks it recursively (schema validation,
 * rendering, error echoes). The walk here is iterative, so any depth is safe to inspect.
 */

/** Object keys refused anywhere in a body: assigning them to a plain object changes its prototype. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__']);

export interface JsonBoundsProblem {
  /** Where the problem is, from the body's root (object keys and array indices). */
  path: (string | number)[];
  kind: 'depth' | 'key';
}

/**
 * Finds the first place where `value` nests deeper than `maxDepth` containers (the body itself is
 * level 1) or carries a forbidden key. Returns null when the value is within bounds.
 */
export function checkJsonBounds(value: unknown, maxDepth: number): JsonBoundsProblem | null {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (!item || item.value === null || typeof item.value !== 'object') continue;
    const depth = item.path.length + 1;
    if (depth > maxDepth) return { path: item.path, kind: 'depth' };
    if (Array.isArray(item.value)) {
      for (let i = item.value.length - 1; i >= 0; i--) {
        const child: unknown = item.value[i];
        if (child !== null && typeof child === 'object') stack.push({ value: child, path: [...item.path, i] });
      }
      continue;
    }
    const entries = Object.entries(item.value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i] as [string, unknown];
      if (FORBIDDEN_KEYS.has(key)) return { path: [...item.path, key], kind: 'key' };
      if (child !== null && typeof child === 'object') stack.push({ value: child, path: [...item.path, key] });
    }
  }
  return null;
}

/**
 * A path as error messages name it: `questions.q1.criteria[2]`; a key that is not a plain name is
 * quoted (`questions["a b"]`), each key is cut to `maxKey` characters and the path to its first
 * `maxParts` steps, so that a message never carries raw newlines or an unbounded key.
 */
export function describePath(path: readonly (string | number)[], maxKey = 64, maxParts = 8): string {
  if (path.length === 0) return 'body';
  let out = typeof path[0] === 'number' ? 'body' : '';
  for (const part of path.slice(0, maxParts)) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[\w$-]+$/.test(part)) out += `${out ? '.' : ''}${clip(part, maxKey)}`;
    else out += `${out ? '' : 'body'}[${JSON.stringify(clip(part, maxKey))}]`;
  }
  return path.length > maxParts ? `${out}…` : out;
}

/** A string cut to `max` characters, with an ellipsis when it was cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/**
 * A value as an error body may echo it: strings cut to `maxChars`, objects and arrays whose compact
 * JSON is longer than `maxChars` replaced by that JSON cut to `maxChars` (a string). Only call it on
 * values already checked by checkJsonBounds (JSON.stringify recurses).
 */
export function boundedEcho(value: unknown, maxChars = 200): unknown {
  if (typeof value === 'string') return clip(value, maxChars);
  if (value === null || typeof value !== 'object') return value;
  const text = JSON.stringify(value);
  return text.length <= maxChars ? value : clip(text, maxChars);
}
