/**
 * The API reference, generated from the server's own OpenAPI document (GET /openapi.json of an
 * in-process app): writes docs/public/openapi.json, one page per operation under docs/api/, a
 * schemas page, an index, and the sidebar the VitePress config reads. `node docs/scripts/openapi.ts`
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchLiveOpenApi, type OpenApiDocument } from './live-openapi.ts';
import { code, fence, generatedNote, inline, table } from './markdown.ts';

export const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Sidebar and index order of the OpenAPI tags; unknown tags follow in document order. */
const TAG_ORDER = ['Inference', 'Console', 'Auth', 'Operations'];

export interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  description?: string;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  example?: unknown;
  format?: string;
  pattern?: string;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface MediaType {
  schema?: Schema;
}

interface Operation {
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, MediaType> };
  responses?: Record<string, { description?: string; content?: Record<string, MediaType> }>;
}

export interface OperationRef {
  method: string;
  path: string;
  slug: string;
  tag: string;
  summary: string;
  operation: Operation;
}

export interface GeneratedFile {
  /** Relative to docs/. */
  file: string;
  content: string;
}

export interface SidebarItem {
  text: string;
  link?: string;
  collapsed?: boolean;
  items?: SidebarItem[];
}

/** `POST /control/v1/keys/{id}` -> `post-control-v1-keys-id`. */
export function operationSlug(method: string, apiPath: string): string {
  const rest = apiPath
    .toLowerCase()
    .replace(/[{}]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return `${method.toLowerCase()}-${rest || 'root'}`;
}

/** Every operation of the document, grouped and ordered as the reference shows them. */
export function listOperations(doc: OpenApiDocument): OperationRef[] {
  const ops: OperationRef[] = [];
  for (const [apiPath, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation) continue;
      ops.push({
        method,
        path: apiPath,
        slug: operationSlug(method, apiPath),
        tag: operation.tags?.[0] ?? 'Other',
        summary: operation.summary ?? `${method.toUpperCase()} ${apiPath}`,
        operation,
      });
    }
  }
  const tags = tagOrder(ops);
  return ops.sort((a, b) => tags.indexOf(a.tag) - tags.indexOf(b.tag));
}

function tagOrder(ops: readonly OperationRef[]): string[] {
  const seen = [...new Set(ops.map((o) => o.tag))];
  return [...TAG_ORDER.filter((t) => seen.includes(t)), ...seen.filter((t) => !TAG_ORDER.includes(t))];
}

const refName = (ref: string): string => ref.split('/').at(-1) ?? ref;
const schemaLink = (name: string): string => `[${name}](./schemas.md#${name.toLowerCase()})`;

/** A one-line type expression: `string`, `map<string, number>`, links to named schemas. */
export function typeOf(s: Schema | boolean | undefined, depth = 0): string {
  if (s === undefined || s === true) return 'any JSON';
  if (s === false) return 'never';
  if (s.$ref) return schemaLink(refName(s.$ref));
  if (s.const !== undefined) return code(JSON.stringify(s.const));
  if (s.enum) return s.enum.map((v) => code(JSON.stringify(v))).join(' \\| ');
  const union = s.oneOf ?? s.anyOf;
  if (union) return union.map((u) => typeOf(u, depth + 1)).join(' \\| ');
  if (s.allOf) return s.allOf.map((u) => typeOf(u, depth + 1)).join(' & ');
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length === 0) return 'any JSON';
  const one = (t: string): string => {
    if (t === 'array')
      return s.items && Object.keys(s.items).length > 0 ? `array of ${typeOf(s.items, depth + 1)}` : 'array';
    if (t === 'object') {
      if (s.properties && Object.keys(s.properties).length > 0) return 'object';
      if (s.additionalProperties && s.additionalProperties !== true && Object.keys(s.additionalProperties).length > 0) {
        return `map of string to ${typeOf(s.additionalProperties, depth + 1)}`;
      }
      return 'object';
    }
    return t === 'integer' ? 'integer' : t;
  };
  const text = types.map(one).join(' \\| ');
  return s.nullable ? `${text} \\| null` : text;
}

/** Constraints worth a column: bounds, format, pattern, default. */
function constraintsOf(s: Schema | undefined): string {
  if (!s) return '';
  const out: string[] = [];
  if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined) out.push(`length ≥ ${s.minLength}`);
  if (s.maxLength !== undefined) out.push(`length ≤ ${s.maxLength}`);
  if (s.minItems !== undefined) out.push(`items ≥ ${s.minItems}`);
  if (s.maxItems !== undefined) out.push(`items ≤ ${s.maxItems}`);
  if (s.format) out.push(`format ${s.format}`);
  if (s.pattern) out.push(`pattern ${code(s.pattern)}`);
  if (s.default !== undefined) out.push(`default ${code(JSON.stringify(s.default))}`);
  return out.join(', ');
}

/** Field rows of an object schema; inline objects (not named schemas) are expanded with dotted names. */
export function fieldRows(s: Schema, prefix = '', depth = 0): string[][] {
  const rows: string[][] = [];
  const required = new Set(s.required ?? []);
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    const full = `${prefix}${name}`;
    rows.push([
      code(full),
      typeOf(prop),
      required.has(name) ? 'yes' : 'no',
      inline(prop.description ?? ''),
      constraintsOf(prop),
    ]);
    if (depth < 3 && !prop.$ref) {
      if (prop.properties) rows.push(...fieldRows(prop, `${full}.`, depth + 1));
      else if (prop.items?.properties) rows.push(...fieldRows(prop.items, `${full}[].`, depth + 1));
    }
  }
  return rows;
}

const FIELD_HEADER = ['field', 'type', 'required', 'description', 'constraints'];

/** A schema's documentation: description, variants, field tables. */
function schemaBody(s: Schema): string {
  const parts: string[] = [];
  if (s.description) parts.push(inline(s.description));
  const variants = s.oneOf ?? s.anyOf;
  if (variants?.every((v) => v.properties || v.$ref)) {
    parts.push('One of:');
    variants.forEach((v, i) => {
      if (v.$ref) {
        parts.push(`- ${typeOf(v)}`);
        return;
      }
      const tag = v.properties?.type?.enum?.[0];
      parts.push(`**Variant ${i + 1}${tag !== undefined ? `: ${code(`type: ${JSON.stringify(tag)}`)}` : ''}**`);
      parts.push(table(FIELD_HEADER, fieldRows(v)));
    });
  } else if (s.properties) {
    parts.push(table(FIELD_HEADER, fieldRows(s)));
  } else {
    parts.push(`Type: ${typeOf(s)}`);
  }
  return parts.join('\n\n');
}

function securityText(security: Record<string, string[]>[] | undefined): string {
  if (!security || security.length === 0) return 'None: no credential is needed.';
  const names = security.flatMap((entry) => Object.keys(entry));
  const describe = (name: string): string => {
    if (name === 'bearer') return 'an API key: `Authorization: Bearer brier_sk_...`';
    if (name === 'session') {
      return 'the console session cookie (`brier.session_token`, set by sign-in); mutations also need a trusted `Origin` header ([CSRF rules](../guide/control-plane.md#csrf-and-cors))';
    }
    return code(name);
  };
  return names.length === 1 ? `Requires ${describe(names[0] ?? '')}.` : `Either ${names.map(describe).join(', or ')}.`;
}

/** A JSON example for a schema: its example, default or first enum value, else a typed placeholder. */
export function exampleOf(s: Schema | undefined, doc: OpenApiDocument, depth = 0): unknown {
  if (!s || depth > 6) return null;
  if (s.$ref) return exampleOf(doc.components?.schemas?.[refName(s.$ref)] as Schema | undefined, doc, depth + 1);
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const union = s.oneOf ?? s.anyOf;
  if (union) return exampleOf(union[0], doc, depth + 1);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'object' || s.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s.properties ?? {})) {
      if ((s.required ?? []).includes(k) || depth === 0) out[k] = exampleOf(v, doc, depth + 1);
    }
    return out;
  }
  if (type === 'array') return [exampleOf(s.items, doc, depth + 1)];
  if (type === 'string') return s.format === 'email' ? 'ada@example.com' : 'string';
  if (type === 'integer') return s.minimum ?? 1;
  if (type === 'number') return s.minimum ?? 0.5;
  if (type === 'boolean') return true;
  return null;
}

/** Hand-picked request bodies where a generated placeholder would teach nothing. */
const EXAMPLE_BODIES: Record<string, unknown> = {
  'post /v1/systemone': {
    state: 'I was charged twice for my subscription. Please refund one.',
    questions: {
      refund: { type: 'noul', instructions: 'Is the customer asking for money back?' },
      team: {
        type: 'choice',
        instructions: 'Which team should handle this?',
        criteria: { billing: 'charges and refunds', tech: 'bugs and outages', other: null },
      },
      urgency: { type: 'score', instructions: 'How urgent is this?', criteria: ['low', 'medium', 'high'] },
    },
  },
};

function curlExample(ref: OperationRef, doc: OpenApiDocument): string {
  const op = ref.operation;
  const security = (op.security ?? []).flatMap((e) => Object.keys(e));
  const query = (op.parameters ?? []).filter((p) => p.in === 'query' && p.required);
  let url = ref.path.replace(/\{(\w+)\}/g, (_m, name: string) => `<${name}>`);
  if (query.length > 0)
    url += `?${query.map((p) => `${p.name}=${String(exampleOf(p.schema, doc) ?? '...')}`).join('&')}`;
  const lines = [`curl -s${ref.method === 'get' ? '' : ` -X ${ref.method.toUpperCase()}`} "$BRIER_URL${url}"`];
  if (security[0] === 'bearer') lines.push('-H "Authorization: Bearer $BRIER_KEY"');
  else if (security[0] === 'session') lines.push('-b cookies.txt -H "Origin: $BRIER_URL"');
  const body = op.requestBody?.content?.['application/json']?.schema;
  if (body) {
    const example = EXAMPLE_BODIES[`${ref.method} ${ref.path}`] ?? exampleOf(body, doc);
    lines.push("-H 'content-type: application/json'");
    lines.push(`-d '${JSON.stringify(example, null, 2).replaceAll("'", "'\\''")}'`);
  }
  return fence('sh', lines.join(' \\\n  '));
}

function responseSchemaText(content: Record<string, MediaType> | undefined): string {
  if (!content) return '(no body)';
  return Object.entries(content)
    .map(([type, media]) => (media.schema ? `${typeOf(media.schema)} (${code(type)})` : code(type)))
    .join('; ');
}

export function renderOperation(ref: OperationRef, doc: OpenApiDocument): string {
  const op = ref.operation;
  const out: string[] = [
    generatedNote('docs/scripts/openapi.ts from GET /openapi.json'),
    '',
    `# ${ref.summary}`,
    '',
    `<div class="api-endpoint"><span class="api-method api-method-${ref.method}">${ref.method.toUpperCase()}</span> <code>${inline(ref.path)}</code></div>`,
    '',
  ];
  if (op.description) out.push(inline(op.description), '');
  out.push('## Authentication', '', securityText(op.security), '');

  const params = op.parameters ?? [];
  if (params.length > 0) {
    out.push(
      '## Parameters',
      '',
      table(
        ['name', 'in', 'type', 'required', 'description', 'constraints'],
        params.map((p) => [
          code(p.name),
          p.in,
          typeOf(p.schema),
          p.required ? 'yes' : 'no',
          inline(p.description ?? p.schema?.description ?? ''),
          constraintsOf(p.schema),
        ]),
      ),
      '',
    );
  }

  const body = op.requestBody?.content?.['application/json']?.schema;
  if (body) {
    out.push(
      '## Request body',
      '',
      `${op.requestBody?.required ? 'Required' : 'Optional'}, \`application/json\`: ${typeOf(body)}.`,
      '',
    );
    const resolved = body.$ref ? (doc.components?.schemas?.[refName(body.$ref)] as Schema | undefined) : body;
    if (resolved?.properties) out.push(table(FIELD_HEADER, fieldRows(resolved)), '');
  }

  out.push('## Responses', '');
  const responses = Object.entries(op.responses ?? {});
  out.push(
    table(
      ['status', 'meaning', 'body'],
      responses.map(([status, r]) => [
        Number(status) >= 400 ? `[${status}](../guide/errors.md)` : `**${status}**`,
        inline(r.description ?? ''),
        responseSchemaText(r.content),
      ]),
    ),
    '',
  );
  if (responses.some(([status]) => Number(status) >= 400)) {
    out.push(
      'Every error body is an [Error](./schemas.md#error): `{detail, message, request_id}`; see [Errors and limits](../guide/errors.md) for the `error_type` values and `retry-after`.',
      '',
    );
  }
  const ok = responses.find(([status]) => status.startsWith('2'));
  const okSchema = ok?.[1].content?.['application/json']?.schema;
  out.push('## Example', '', curlExample(ref, doc), '');
  if (okSchema) {
    out.push(
      `A ${ok?.[0]} body has this shape (placeholder values):`,
      '',
      fence('json', JSON.stringify(exampleOf(okSchema, doc), null, 2)),
      '',
    );
  }
  return out.join('\n');
}

export function renderSchemas(doc: OpenApiDocument): string {
  const out: string[] = [
    generatedNote('docs/scripts/openapi.ts from GET /openapi.json'),
    '',
    '# Schemas',
    '',
    'The named schemas of the [OpenAPI document](./index.md#the-openapi-document), generated from the zod schemas that validate requests.',
    '',
  ];
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
    out.push(`## ${name} {#${name.toLowerCase()}}`, '', schemaBody(schema as Schema), '');
  }
  return out.join('\n');
}

export function renderIndex(doc: OpenApiDocument, ops: readonly OperationRef[]): string {
  const out: string[] = [
    generatedNote('docs/scripts/openapi.ts from GET /openapi.json'),
    '',
    '# API reference',
    '',
    `${inline(doc.info.title)} ${inline(doc.info.version)}: ${inline(doc.info.description ?? '')} Every page here is generated at build time from the server's own OpenAPI ${inline(doc.openapi)} document, so it lists exactly the routes the server registers.`,
    '',
    '- Inference (`/v1/...`) takes an API key: `Authorization: Bearer brier_sk_...`.',
    '- The console and account routes (`/control/v1/...`) take the session cookie set by sign-in; `GET /control/v1/usage` also takes an API key.',
    '- Every response carries `x-typesafe-request-id` (and the same `x-request-id`); every error body has the same shape ([Errors and limits](../guide/errors.md)).',
    '',
  ];
  for (const tag of tagOrder(ops)) {
    out.push(`## ${tag}`, '');
    out.push(
      table(
        ['method', 'path', 'summary'],
        ops
          .filter((o) => o.tag === tag)
          .map((o) => [`**${o.method.toUpperCase()}**`, `[${code(o.path)}](./${o.slug}.md)`, inline(o.summary)]),
      ),
      '',
    );
  }
  out.push(
    '## The OpenAPI document',
    '',
    'A running server serves it at <a href="/openapi.json" target="_self"><code>/openapi.json</code></a>; the copy this site was built from is <a href="/docs/openapi.json" target="_self" download><code>/docs/openapi.json</code></a>. Feed either to a client generator or an API tool. All [named schemas](./schemas.md) are documented on one page.',
    '',
  );
  return out.join('\n');
}

export function renderSidebar(ops: readonly OperationRef[]): SidebarItem[] {
  return [
    {
      text: 'API reference',
      items: [
        { text: 'Overview', link: '/api/' },
        { text: 'Schemas', link: '/api/schemas' },
      ],
    },
    ...tagOrder(ops).map((tag) => ({
      text: tag,
      collapsed: tag !== 'Inference',
      items: ops
        .filter((o) => o.tag === tag)
        .map((o) => ({ text: `${o.method.toUpperCase()} ${o.path}`, link: `/api/${o.slug}` })),
    })),
  ];
}

export function renderReference(doc: OpenApiDocument): {
  files: GeneratedFile[];
  sidebar: SidebarItem[];
  operations: OperationRef[];
} {
  const operations = listOperations(doc);
  const files: GeneratedFile[] = [
    { file: 'api/index.md', content: renderIndex(doc, operations) },
    { file: 'api/schemas.md', content: renderSchemas(doc) },
    ...operations.map((o) => ({ file: `api/${o.slug}.md`, content: renderOperation(o, doc) })),
    { file: 'public/openapi.json', content: `${JSON.stringify(doc, null, 2)}\n` },
    { file: '_generated/api-sidebar.json', content: `${JSON.stringify(renderSidebar(operations), null, 2)}\n` },
  ];
  return { files, sidebar: renderSidebar(operations), operations };
}

/** Writes files under docsDir, replacing docs/api/ whole so that removed routes lose their pages. */
export function writeFiles(docsDir: string, files: readonly GeneratedFile[], clean: readonly string[] = []): void {
  for (const dir of clean) fs.rmSync(path.join(docsDir, dir), { recursive: true, force: true });
  for (const f of files) {
    const target = path.join(docsDir, f.file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, f.content.endsWith('\n') ? f.content : `${f.content}\n`);
  }
}

export async function generateReference(docsDir = DOCS_DIR): Promise<OperationRef[]> {
  const doc = await fetchLiveOpenApi();
  const { files, operations } = renderReference(doc);
  writeFiles(docsDir, files, ['api']);
  return operations;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ops = await generateReference();
  console.log(`docs: API reference for ${ops.length} operations`);
}
