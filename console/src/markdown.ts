/**
 * The small Markdown subset of a model card, parsed into a tree that the console renders as React
 * elements (never as HTML: markup in the text stays text). Blocks: ATX headings, paragraphs, `-`/`*`
 * lists (continuation lines join the item), pipe tables, fenced code. Inline: `code`, **strong**,
 * *emphasis* (not inside a word, so `10*sd*2` stays as written) and [links](url) to http(s) or
 * relative addresses only; anything else is text.
 */

export type Inline =
  | { kind: 'text'; text: string }
  | { kind: 'code'; text: string }
  | { kind: 'strong'; children: Inline[] }
  | { kind: 'em'; children: Inline[] }
  | { kind: 'link'; href: string; children: Inline[] };

export type Block =
  | { kind: 'heading'; level: 1 | 2 | 3 | 4 | 5 | 6; children: Inline[] }
  | { kind: 'paragraph'; children: Inline[] }
  | { kind: 'list'; items: Inline[][] }
  | { kind: 'table'; header: Inline[][]; rows: Inline[][][] }
  | { kind: 'code'; text: string };

const HEADING = /^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const FENCE = /^\s{0,3}(```+|~~~+)/;
const ITEM = /^\s{0,3}[-*+]\s+(.*)$/;
const DELIMITER_ROW = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

/** The cells of a pipe-table row; `\|` is a literal bar inside a cell. */
function cells(row: string): string[] {
  let s = row.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && s[i + 1] === '|') {
      current += '|';
      i++;
    } else if (c === '|') {
      out.push(current.trim());
      current = '';
    } else {
      current += c;
    }
  }
  out.push(current.trim());
  return out;
}

const isTableStart = (lines: readonly string[], i: number) =>
  (lines[i] ?? '').trimStart().startsWith('|') && DELIMITER_ROW.test(lines[i + 1] ?? '');

function startsBlock(lines: readonly string[], i: number): boolean {
  const line = lines[i] ?? '';
  return HEADING.test(line) || FENCE.test(line) || ITEM.test(line) || isTableStart(lines, i);
}

export function parseBlocks(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence?.[1]) {
      const marker = fence[1];
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? '').trimStart().startsWith(marker)) body.push(lines[i++] ?? '');
      i++; // the closing fence (or the end)
      blocks.push({ kind: 'code', text: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading?.[1]) {
      const level = heading[1].length as 1 | 2 | 3 | 4 | 5 | 6;
      blocks.push({ kind: 'heading', level, children: parseInline(heading[2] ?? '') });
      i++;
      continue;
    }
    if (isTableStart(lines, i)) {
      const header = cells(line).map(parseInline);
      const rows: Inline[][][] = [];
      i += 2;
      while (i < lines.length && (lines[i] ?? '').trimStart().startsWith('|')) {
        rows.push(cells(lines[i] ?? '').map(parseInline));
        i++;
      }
      blocks.push({ kind: 'table', header, rows });
      continue;
    }
    if (ITEM.test(line)) {
      const items: string[] = [];
      while (i < lines.length) {
        const current = lines[i] ?? '';
        const item = ITEM.exec(current);
        if (item) {
          items.push(item[1] ?? '');
        } else if (current.trim() !== '' && !startsBlock(lines, i) && items.length > 0) {
          items[items.length - 1] += ` ${current.trim()}`;
        } else {
          break;
        }
        i++;
      }
      blocks.push({ kind: 'list', items: items.map(parseInline) });
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && (lines[i] ?? '').trim() !== '' && (para.length === 0 || !startsBlock(lines, i))) {
      para.push((lines[i] ?? '').trim());
      i++;
    }
    blocks.push({ kind: 'paragraph', children: parseInline(para.join(' ')) });
  }
  return blocks;
}

const WORD = /[\p{L}\p{N}_]/u;

/** A `*`/`**` run may open at i when it is not inside a word and text follows it. */
function canOpen(s: string, i: number, n: number): boolean {
  const before = s[i - 1];
  const after = s[i + n];
  return (before === undefined || !WORD.test(before)) && after !== undefined && !/\s/.test(after);
}

function canClose(s: string, i: number, n: number): boolean {
  const before = s[i - 1];
  const after = s[i + n];
  return before !== undefined && !/\s/.test(before) && (after === undefined || !WORD.test(after));
}

function closing(s: string, from: number, n: number): number {
  const marker = '*'.repeat(n);
  for (let j = from; j < s.length; j++) {
    if (s[j] === '`') {
      const end = s.indexOf('`', j + 1);
      if (end < 0) return -1;
      j = end;
      continue;
    }
    if (s.startsWith(marker, j) && (n === 2 || s[j + 1] !== '*') && canClose(s, j, n)) return j;
  }
  return -1;
}

/** Only addresses that cannot run script: http(s), mailto, or relative paths and fragments. */
export function safeHref(href: string): string | null {
  const h = href.trim();
  if (/^(https?:|mailto:)/i.test(h)) return h;
  if (/^[a-z][a-z0-9+.-]*:/i.test(h) || h.startsWith('//')) return null;
  return h;
}

export function parseInline(s: string): Inline[] {
  const out: Inline[] = [];
  let text = '';
  const flush = () => {
    if (text) out.push({ kind: 'text', text });
    text = '';
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length && /[\\`*_[\]()#|-]/.test(s[i + 1] ?? '')) {
      text += s[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      let n = 1;
      while (s[i + n] === '`') n++;
      const marker = '`'.repeat(n);
      const end = s.indexOf(marker, i + n);
      if (end > i) {
        flush();
        const code = s.slice(i + n, end);
        out.push({
          kind: 'code',
          text: code.length > 2 && code.startsWith(' ') && code.endsWith(' ') ? code.slice(1, -1) : code,
        });
        i = end + n;
        continue;
      }
      text += marker;
      i += n;
      continue;
    }
    if (c === '*') {
      const n = s[i + 1] === '*' ? 2 : 1;
      if (canOpen(s, i, n)) {
        const end = closing(s, i + n, n);
        if (end > i + n) {
          flush();
          const children = parseInline(s.slice(i + n, end));
          out.push(n === 2 ? { kind: 'strong', children } : { kind: 'em', children });
          i = end + n;
          continue;
        }
      }
      text += '*'.repeat(n);
      i += n;
      continue;
    }
    if (c === '[') {
      const m = /^\[([^\]]+)\]\(([^()\s]+)\)/.exec(s.slice(i));
      const href = m?.[2] ? safeHref(m[2]) : null;
      if (m && href !== null) {
        flush();
        out.push({ kind: 'link', href, children: parseInline(m[1] ?? '') });
        i += m[0].length;
        continue;
      }
    }
    text += c;
    i++;
  }
  flush();
  return out;
}

/** The text a reader sees, without the markup (for titles and accessible names). */
export function plainText(nodes: readonly Inline[]): string {
  return nodes.map((n) => (n.kind === 'text' || n.kind === 'code' ? n.text : plainText(n.children))).join('');
}
