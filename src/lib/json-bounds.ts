/**
 * Bounds on JSON that are checked before anything walks it recursively (schema validation,
 * rendering, error echoes): its depth, its keys and their uniqueness, read from the text in one
 * iterative pass, so any depth is safe to inspect.
 */

/** Object keys refused anywhere in a body: assigning them to a plain object changes its prototype. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__']);

export interface JsonBoundsProblem {
  /**
   * Where the problem is, from the body's root (object keys and array indices): the container nested
   * too deep, or the key that is forbidden or repeated (the last step is that key).
   */
  path: (string | number)[];
  kind: 'depth' | 'key' | 'duplicate';
}

interface Frame {
  /** The keys seen so far in an object; null in an array. */
  keys: Set<string> | null;
  /** The current key (object) or index (array; -1 before the first element). */
  at: string | number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** What ends a number or a literal: whitespace, `,`, `]` or `}`. */
const ENDS_LITERAL: ReadonlySet<number> = new Set([0x20, 0x0a, 0x0d, 0x09, 0x2c, 0x5d, 0x7d]);

/**
 * Checks the text of a JSON value that JSON.parse has accepted, in one pass over its characters and
 * in document order: nesting deeper than `maxDepth` containers (the value itself is level 1), a
 * forbidden key (FORBIDDEN_KEYS), or a key that appears twice in one object (which JSON.parse would
 * silently resolve to the last). Returns the first problem, or null.
 *
 * It never recurses and keeps one frame per open container plus the keys of the open objects, so
 * its memory is bounded by the text (itself bounded by the body limit) and any depth is safe to
 * scan. Keys are compared decoded (`"a"` and `"\u0061"` are the same key).
 */
export function checkJsonText(text: string, maxDepth: number): JsonBoundsProblem | null {
  const frames: Frame[] = [];
  const path = (): (string | number)[] => frames.map((f) => f.at);
  /** The previous structural character: a string after `{` or `,` in an object is a key. */
  let previous = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    const top = frames.at(-1);
    if (c === 0x7b || c === 0x5b) {
      // `{` or `[`: a value starts, and a container opens.
      if (top && top.keys === null) top.at = (top.at as number) + 1;
      if (frames.length + 1 > maxDepth) return { path: path(), kind: 'depth' };
      frames.push(c === 0x7b ? { keys: new Set(), at: '' } : { keys: null, at: -1 });
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
    } else if (c === QUOTE) {
      const start = i;
      let escaped = false;
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === QUOTE) break;
        if (d === BACKSLASH) {
          escaped = true;
          i++;
        }
      }
      const isKey = top?.keys != null && (previous === 0x7b || previous === 0x2c);
      if (isKey && top?.keys) {
        const key = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i);
        top.at = key;
        if (FORBIDDEN_KEYS.has(key)) return { path: path(), kind: 'key' };
        if (top.keys.has(key)) return { path: path(), kind: 'duplicate' };
        top.keys.add(key);
      } else if (top && top.keys === null) {
        top.at = (top.at as number) + 1;
      }
    } else if (c !== 0x3a && c !== 0x2c) {
      // A number, true, false or null: a value in an array moves the index on.
      if (top && top.keys === null) top.at = (top.at as number) + 1;
      while (i + 1 < text.length && !ENDS_LITERAL.has(text.charCodeAt(i + 1))) i++;
    }
    previous = c;
  }
  return null;
}

/** A problem of checkJsonText as a FastAPI-style error entry's `type` and `msg` (the path is the caller's). */
export function describeProblem(problem: JsonBoundsProblem, maxDepth: number): { type: string; msg: string } {
  if (problem.kind === 'depth') {
    return { type: 'too_deep', msg: `JSON nested deeper than ${maxDepth} levels (the limit; the body is level 1)` };
  }
  const key = JSON.stringify(clip(String(problem.path.at(-1) ?? ''), 64));
  if (problem.kind === 'key') return { type: 'key_forbidden', msg: `${key} is not allowed as a key` };
  return {
    type: 'duplicate_key',
    msg: `the key ${key} appears more than once in ${describePath(problem.path.slice(0, -1))}; each key may appear once (JSON parsers keep only the last)`,
  };
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

/** Characters of one key in an error's `loc` (ids and labels past their limit are cut). */
export const MAX_LOC_CHARS = 140;

/** An error's FastAPI-style `loc` for a place in the body: "body", then the path with each key cut. */
export function locOf(path: readonly (string | number)[]): (string | number)[] {
  return ['body', ...path.map((p) => (typeof p === 'number' ? p : clip(p, MAX_LOC_CHARS)))];
}

/** A string cut to `max` characters, with an ellipsis when it was cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/**
 * A value as an error body may echo it: strings cut to `maxChars`, objects and arrays whose compact
 * JSON is longer than `maxChars` replaced by that JSON cut to `maxChars` (a string). Only call it on
 * values already checked by checkJsonText (JSON.stringify recurses).
 */
export function boundedEcho(value: unknown, maxChars = 200): unknown {
  if (typeof value === 'string') return clip(value, maxChars);
  if (value === null || typeof value !== 'object') return value;
  const text = JSON.stringify(value);
  return text.length <= maxChars ? value : clip(text, maxChars);
}
