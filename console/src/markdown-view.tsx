import type { ReactNode } from 'react';
import type { Block, Inline } from './markdown.ts';

/* Parsed Markdown as React elements: the text is always text, never parsed as HTML. */

function InlineNode({ node }: { node: Inline }): ReactNode {
  switch (node.kind) {
    case 'text':
      return node.text;
    case 'code':
      return <code>{node.text}</code>;
    case 'strong':
      return (
        <strong>
          <InlineView nodes={node.children} />
        </strong>
      );
    case 'em':
      return (
        <em>
          <InlineView nodes={node.children} />
        </em>
      );
    case 'link':
      return (
        <a href={node.href} rel="noreferrer">
          <InlineView nodes={node.children} />
        </a>
      );
  }
}

export function InlineView({ nodes }: { nodes: readonly Inline[] }): ReactNode {
  // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's spans have no other identity
  return nodes.map((n, i) => <InlineNode key={i} node={n} />);
}

type Level = 1 | 2 | 3 | 4 | 5 | 6;

function Cells({ cells, header }: { cells: readonly Inline[][]; header?: boolean }) {
  return (
    <tr>
      {cells.map((cell, j) =>
        header ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: columns have no other identity
          <th key={j} scope="col">
            <InlineView nodes={cell} />
          </th>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: columns have no other identity
          <td key={j}>
            <InlineView nodes={cell} />
          </td>
        ),
      )}
    </tr>
  );
}

function BlockView({ block, headingOffset }: { block: Block; headingOffset: number }): ReactNode {
  switch (block.kind) {
    case 'heading': {
      const H = `h${Math.min(6, block.level + headingOffset) as Level}` as const;
      return (
        <H>
          <InlineView nodes={block.children} />
        </H>
      );
    }
    case 'paragraph':
      return (
        <p>
          <InlineView nodes={block.children} />
        </p>
      );
    case 'list':
      return (
        <ul>
          {block.items.map((item, j) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's items have no other identity
            <li key={j}>
              <InlineView nodes={item} />
            </li>
          ))}
        </ul>
      );
    case 'code':
      return (
        <pre className="code-block">
          <code>{block.text}</code>
        </pre>
      );
    case 'table':
      return (
        <div className="table-wrap">
          <table>
            <thead>
              <Cells cells={block.header} header />
            </thead>
            <tbody>
              {block.rows.map((row, r) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: rows have no other identity
                <Cells key={r} cells={row} />
              ))}
            </tbody>
          </table>
        </div>
      );
  }
}

/** `headingOffset` moves the document's headings under the page's own (1: `#` becomes h2). */
export function MarkdownView({ blocks, headingOffset = 0 }: { blocks: readonly Block[]; headingOffset?: number }) {
  return (
    <div className="markdown">
      {blocks.map((b, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a rendered document's blocks have no other identity
        <BlockView key={i} block={b} headingOffset={headingOffset} />
      ))}
    </div>
  );
}
