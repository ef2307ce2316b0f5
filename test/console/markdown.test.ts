import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { type Block, type Inline, parseBlocks, parseInline, plainText, safeHref } from '../../console/src/markdown.ts';
import { ROOT } from '../server.ts';

/** Every inline node of a block tree, depth first. */
function inlines(blocks: readonly Block[]): Inline[] {
  const all: Inline[] = [];
  const walk = (nodes: readonly Inline[]) => {
    for (const n of nodes) {
      all.push(n);
      if (n.kind === 'strong' || n.kind === 'em' || n.kind === 'link') walk(n.children);
    }
  };
  for (const b of blocks) {
    if (b.kind === 'heading' || b.kind === 'paragraph') walk(b.children);
    if (b.kind === 'list') b.items.forEach(walk);
    if (b.kind === 'table') [b.header, ...b.rows].flat().forEach(walk);
  }
  return all;
}

describe('console markdown: the model card as elements, not as source', () => {
  test('inline code loses its backticks; bold and emphasis become nodes', () => {
    assert.deepEqual(parseInline('alias `brier-latest` is **strong** and *soft*'), [
      { kind: 'text', text: 'alias ' },
      { kind: 'code', text: 'brier-latest' },
      { kind: 'text', text: ' is ' },
      { kind: 'strong', children: [{ kind: 'text', text: 'strong' }] },
      { kind: 'text', text: ' and ' },
      { kind: 'em', children: [{ kind: 'text', text: 'soft' }] },
    ]);
    assert.deepEqual(parseInline('**Head** (`src/head.ts`): x'), [
      { kind: 'strong', children: [{ kind: 'text', text: 'Head' }] },
      { kind: 'text', text: ' (' },
      { kind: 'code', text: 'src/head.ts' },
      { kind: 'text', text: '): x' },
    ]);
  });

  test('asterisks inside words and code stay as written', () => {
    assert.deepEqual(parseInline('10*sd(cos(s,o)), ln(k), 10*(top1-top2)'), [
      { kind: 'text', text: '10*sd(cos(s,o)), ln(k), 10*(top1-top2)' },
    ]);
    assert.deepEqual(parseInline('`a*b*c` and 2 * 3'), [
      { kind: 'code', text: 'a*b*c' },
      { kind: 'text', text: ' and 2 * 3' },
    ]);
    assert.deepEqual(parseInline('an unclosed ` tick'), [{ kind: 'text', text: 'an unclosed ` tick' }]);
  });

  test('markup in the text stays text, and links run no script', () => {
    assert.deepEqual(parseInline('<img src=x onerror=alert(1)> <script>x</script>'), [
      { kind: 'text', text: '<img src=x onerror=alert(1)> <script>x</script>' },
    ]);
    assert.deepEqual(parseInline('[card](models/CARD.md) [x](javascript:alert(1))'), [
      { kind: 'link', href: 'models/CARD.md', children: [{ kind: 'text', text: 'card' }] },
      { kind: 'text', text: ' [x](javascript:alert(1))' },
    ]);
    assert.equal(safeHref('https://example.com/a'), 'https://example.com/a');
    assert.equal(safeHref('JavaScript:alert(1)'), null);
    assert.equal(safeHref('data:text/html,x'), null);
    assert.equal(safeHref('//evil.example'), null);
  });

  test('headings, lists with continuation lines, a table right after a paragraph, fenced code are their blocks', () => {
    const md = [
      '# Title `x`',
      '',
      '## What it is',
      '- **Encoder**: one',
      '  continued',
      '- two',
      '',
      'A paragraph line',
      'and its second line.',
      '| type | n |',
      '|---|---|',
      '| noul | `3` |',
      '',
      '```',
      'top-p bin  |0  1|',
      '```',
    ].join('\n');
    const blocks = parseBlocks(md);
    assert.deepEqual(
      blocks.map((b) => b.kind),
      ['heading', 'heading', 'list', 'paragraph', 'table', 'code'],
    );
    const [h1, , list, para, table, code] = blocks;
    assert.equal(h1?.kind === 'heading' && h1.level, 1);
    assert.equal(h1?.kind === 'heading' && plainText(h1.children), 'Title x');
    assert.deepEqual(list?.kind === 'list' && list.items.map(plainText), ['Encoder: one continued', 'two']);
    assert.equal(para?.kind === 'paragraph' && plainText(para.children), 'A paragraph line and its second line.');
    assert.ok(table?.kind === 'table');
    assert.deepEqual(table.header.map(plainText), ['type', 'n']);
    assert.deepEqual(table.rows[0], [[{ kind: 'text', text: 'noul' }], [{ kind: 'code', text: '3' }]]);
    assert.deepEqual(code, { kind: 'code', text: 'top-p bin  |0  1|' });
  });

  test('the shipped model card parses with no stray backtick outside code', () => {
    const card = fs.readFileSync(path.join(ROOT, 'models', 'brier-lite', 'MODEL_CARD.md'), 'utf8');
    const blocks = parseBlocks(card);
    assert.ok(blocks.filter((b) => b.kind === 'table').length >= 5, 'its tables are tables');
    assert.ok(blocks.filter((b) => b.kind === 'code').length >= 2, 'its reliability diagrams are code blocks');
    const text = inlines(blocks).filter((n) => n.kind === 'text');
    assert.deepEqual(
      text.filter((n) => n.kind === 'text' && n.text.includes('`')),
      [],
    );
    assert.ok(inlines(blocks).some((n) => n.kind === 'code' && n.text === 'brier-latest'));
  });
});
