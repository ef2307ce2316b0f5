/**
 * The documentation site: generated from the code and built with VitePress into a temp dir (the same
 * steps as `npm run build:docs`, about 10 s), then checked as a browser would see it: pages exist,
 * internal links and anchors resolve, the API reference covers every route of the live OpenAPI
 * document, and nothing loads from another host.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { fetchLiveOpenApi } from '../../docs/scripts/live-openapi.ts';
import { MODEL_DIR, parseCardDiagrams, type Report, renderCannotDo } from '../../docs/scripts/model-card.ts';
import { DOCS_DIR, listOperations } from '../../docs/scripts/openapi.ts';
import { readEnv } from '../../docs/scripts/tables.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../src/auth/create-auth.ts';
import { EMBEDDED_MODEL_ID } from '../../src/engines/embedded/index.ts';

const run = promisify(execFile);
const ROOT = path.resolve(DOCS_DIR, '..');
const BASE = '/docs/';
/** Same-origin paths outside the docs site that the Brier process serves. */
const OUTSIDE_BASE = new Set(['/console', '/openapi.json']);

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : [p];
  });
}

function decode(s: string): string {
  return s.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'");
}

describe('documentation site', () => {
  let out: string;
  let pages: Map<string, string>;
  /** What the build printed. */
  let printed = '';

  before(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'brier-docs-build-'));
    await run(process.execPath, [path.join(DOCS_DIR, 'scripts', 'generate.ts')], { cwd: ROOT });
    const built = await run(
      process.execPath,
      [path.join(ROOT, 'node_modules', 'vitepress', 'bin', 'vitepress.js'), 'build', 'docs', '--outDir', out],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
    );
    printed = `${built.stdout}${built.stderr}`;
    pages = new Map(
      walk(out)
        .filter((f) => f.endsWith('.html'))
        .map((f) => [path.relative(out, f).split(path.sep).join('/'), fs.readFileSync(f, 'utf8')]),
    );
  });

  after(() => {
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  test('the build prints no warning (esbuild once warned twice that it does not know the target es2024)', () => {
    assert.doesNotMatch(printed, /WARNING|Unrecognized target environment/, printed);
  });

  test('the build has the guide, the API reference and the OpenAPI copy', () => {
    for (const page of [
      'index.html',
      '404.html',
      'guide/quickstart.html',
      'guide/questions.html',
      'guide/probabilities.html',
      'guide/errors.html',
      'guide/control-plane.html',
      'guide/self-hosting.html',
      'guide/compatibility.html',
      'api/index.html',
      'api/schemas.html',
    ]) {
      assert.ok(pages.has(page), `${page} was built`);
    }
    const doc = JSON.parse(fs.readFileSync(path.join(out, 'openapi.json'), 'utf8')) as { openapi: string };
    assert.match(doc.openapi, /^3\./);
  });

  test('every internal link and anchor resolves', () => {
    const problems: string[] = [];
    const idsOf = (html: string) => new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => decode(m[1] ?? '')));
    for (const [file, html] of pages) {
      const pageUrl = new URL(`${BASE}${file}`, 'http://docs.test');
      for (const m of html.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
        const raw = decode(m[1] ?? '');
        if (raw === '' || /^(https?:|mailto:|data:|javascript:)/i.test(raw) || raw.startsWith('//')) continue;
        const url = new URL(raw, pageUrl);
        if (url.origin !== 'http://docs.test') continue;
        const hash = decodeURIComponent(url.hash.slice(1));
        if (!url.pathname.startsWith(BASE)) {
          if (!OUTSIDE_BASE.has(url.pathname)) problems.push(`${file}: ${raw} is outside ${BASE}`);
          continue;
        }
        let rel = url.pathname.slice(BASE.length);
        if (rel === '' || rel.endsWith('/')) rel += 'index.html';
        const target = path.join(out, rel);
        if (!fs.existsSync(target)) {
          problems.push(`${file}: ${raw} -> ${rel} does not exist`);
          continue;
        }
        if (hash && rel.endsWith('.html')) {
          const targetHtml = pages.get(rel) ?? '';
          if (!idsOf(targetHtml).has(hash)) problems.push(`${file}: ${raw}: no id "${hash}" in ${rel}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  test('the API reference has a page for every operation of the live OpenAPI document', async () => {
    const live = await fetchLiveOpenApi();
    const ops = listOperations(live);
    assert.ok(ops.length >= 5, 'the live document has operations');
    const index = pages.get('api/index.html') ?? '';
    const missing: string[] = [];
    for (const op of ops) {
      const page = pages.get(`api/${op.slug}.html`);
      if (
        !page ||
        (!page.includes(op.path.replaceAll('{', '&#123;').replaceAll('}', '&#125;')) && !page.includes(op.path))
      ) {
        missing.push(`${op.method.toUpperCase()} ${op.path}: no page api/${op.slug}.html naming the path`);
      }
      if (!index.includes(`href="/docs/api/${op.slug}.html"`))
        missing.push(`${op.method.toUpperCase()} ${op.path}: not linked from api/index.html`);
    }
    assert.deepEqual(missing, []);
    const built = JSON.parse(fs.readFileSync(path.join(out, 'openapi.json'), 'utf8')) as { paths: object };
    assert.deepEqual(Object.keys(built.paths).sort(), Object.keys(live.paths).sort());
  });

  test('no page loads scripts, styles or fonts from another host', () => {
    const external = /^(https?:)?\/\//i;
    const problems: string[] = [];
    for (const [file, html] of pages) {
      for (const m of html.matchAll(/<script\b[^>]*\ssrc="([^"]*)"/g)) {
        if (external.test(m[1] ?? '')) problems.push(`${file}: script ${m[1]}`);
      }
      for (const m of html.matchAll(/<link\b[^>]*>/g)) {
        const href = /\shref="([^"]*)"/.exec(m[0])?.[1] ?? '';
        if (external.test(href)) problems.push(`${file}: link ${href}`);
      }
      for (const m of html.matchAll(/<(?:img|iframe|source|video|audio)\b[^>]*\ssrc="([^"]*)"/g)) {
        if (external.test(m[1] ?? '')) problems.push(`${file}: embedded ${m[1]}`);
      }
      if (/@import\s+(url\()?["']?(https?:)?\/\//i.test(html)) problems.push(`${file}: CSS @import from another host`);
    }
    for (const file of walk(out).filter((f) => f.endsWith('.css'))) {
      const css = fs.readFileSync(file, 'utf8');
      for (const m of css.matchAll(/url\(\s*["']?([^"')]+)/g)) {
        if (external.test(m[1] ?? '')) problems.push(`${path.relative(out, file)}: url(${m[1]})`);
      }
      if (/@import\s+(url\()?["']?(https?:)?\/\//i.test(css)) problems.push(`${path.relative(out, file)}: @import`);
    }
    for (const file of walk(out).filter((f) => f.endsWith('.js'))) {
      const js = fs.readFileSync(file, 'utf8');
      if (/fonts\.(googleapis|gstatic)\.com|googletagmanager|google-analytics|cdn\.jsdelivr|unpkg\.com/.test(js)) {
        problems.push(`${path.relative(out, file)}: references a font, analytics or CDN host`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('every page has a favicon that the site itself serves', () => {
    const missing: string[] = [];
    for (const [file, html] of pages) {
      const icon = [...html.matchAll(/<link\b[^>]*>/g)].map((m) => m[0]).find((l) => /\srel="icon"/.test(l));
      const href = icon ? /\shref="([^"]*)"/.exec(icon)?.[1] : undefined;
      if (href !== `${BASE}favicon.svg`) missing.push(`${file}: ${icon ?? 'no <link rel="icon">'}`);
    }
    assert.deepEqual(missing, []);
    const svg = fs.readFileSync(path.join(out, 'favicon.svg'), 'utf8');
    assert.match(svg, /^<svg\b[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.doesNotMatch(svg, /\b(href|src)=/, 'the icon loads nothing');
  });

  test('the docs link to the console', () => {
    const linking = [...pages].filter(([, html]) => html.includes('href="/console"')).map(([f]) => f);
    assert.ok(linking.includes('guide/quickstart.html'), `pages linking to /console: ${linking.join(', ')}`);
  });

  test('the calibration page shows report.json numbers and the reliability diagrams', () => {
    const report = JSON.parse(
      fs.readFileSync(path.join(ROOT, 'models', 'brier-lite', 'report.json'), 'utf8'),
    ) as Report;
    const html = pages.get('guide/probabilities.html') ?? '';
    const lto = report.leaveTasksOut.choice;
    assert.ok(lto);
    assert.ok(html.includes(`${lto.model.accuracy.toFixed(3)} / ${lto.prior?.accuracy.toFixed(3)}`));
    assert.ok(html.includes(lto.model.ece.toFixed(3)));
    // in distribution: every row of the training tasks, cross-validated, with its chance floor
    const seen = report.seenAllRowsCrossValidated?.choice;
    assert.ok(seen);
    assert.ok(html.includes(`${seen.model.ece.toFixed(3)} (${seen.eceFloor?.toFixed(3)})`));
    // the paraphrase suite, as the card states it
    assert.ok(report.paraphrase);
    assert.ok(html.includes(`in ${report.paraphrase.maxGroup}`), 'the paraphrase suite on the calibration page');
    const card = fs.readFileSync(path.join(ROOT, 'models', 'brier-lite', 'MODEL_CARD.md'), 'utf8');
    const diagrams = parseCardDiagrams(card);
    assert.equal(diagrams.length, 2);
    const svgs = [...html.matchAll(/<svg class="reliability"[\s\S]*?<\/svg>/g)].map((m) => m[0]);
    assert.equal(svgs.length, diagrams.length);
    diagrams.forEach((d, i) => {
      assert.equal((svgs[i]?.match(/class="rd-bar"/g) ?? []).length, d.bins.filter((b) => b.n > 0).length);
    });
    assert.match(html, /15 equal-width bins/);
  });

  test('every variable of src/config.ts is in the configuration table, described', () => {
    const env = readEnv();
    const html = pages.get('guide/self-hosting.html') ?? '';
    for (const name of env.names) assert.ok(html.includes(`<code>${name}</code>`), `${name} is in the table`);
    assert.deepEqual(env.undescribed, [], "describe these in README.md's configuration table");
  });
});

test("the quickstart's password rule is the server's (PASSWORD_MIN to PASSWORD_MAX characters)", () => {
  const md = fs.readFileSync(path.join(DOCS_DIR, 'guide', 'quickstart.md'), 'utf8');
  const stated = [...md.matchAll(/(\d+)(?: to (\d+))? characters/g)];
  assert.equal(stated.length, 1, `one password length in the quickstart: ${stated.map((m) => m[0]).join('; ')}`);
  assert.equal(Number(stated[0]?.[1]), PASSWORD_MIN);
  assert.equal(Number(stated[0]?.[2]), PASSWORD_MAX);
});

/** The guide's Markdown files and the README. */
function guides(): { file: string; text: string }[] {
  const dir = path.join(DOCS_DIR, 'guide');
  return [
    ...fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.md'))
      .map((f) => path.join(dir, f)),
    path.join(ROOT, 'README.md'),
  ].map((file) => ({ file: path.relative(ROOT, file), text: fs.readFileSync(file, 'utf8') }));
}

test('no shell line backgrounds the install with the start (`npm ci && npm start &` runs the next line before node_modules exists)', () => {
  for (const { file, text } of guides()) {
    for (const line of text.split('\n')) {
      assert.doesNotMatch(line, /npm ci\b[^#]*&\s*(#.*)?$/, `${file}: ${line}`);
    }
  }
});

test("adapter ids in the guides' examples name the model this server ships", () => {
  for (const { file, text } of guides()) {
    for (const m of text.matchAll(/ft:(brier-lite-[\d.]+):/g)) {
      assert.equal(m[1], EMBEDDED_MODEL_ID, `${file}: ${m[0]}`);
    }
  }
});

test('the deployment guide says what runs in the background, where, and how adapters behave in each topology', () => {
  const md = fs.readFileSync(path.join(DOCS_DIR, 'guide', 'deployment.md'), 'utf8');
  assert.doesNotMatch(md, /none run on a timer/);
  const section = md.split(/^## /m).find((s) => s.startsWith('What runs in the background')) ?? '';
  assert.ok(section, 'a section "What runs in the background"');
  for (const thing of ['training jobs', 'BRIER_TRAINING_JOBS', 'BRIER_TRAINING_CONCURRENCY', 'retention', 'usage']) {
    assert.ok(section.includes(thing), `it names ${thing}`);
  }
  const adapters = md.split(/^## /m).find((s) => s.startsWith('Adapters in each topology')) ?? '';
  for (const topology of ['One process', 'Gateways with Brier workers', 'openai+', 'systemone+']) {
    assert.ok(adapters.includes(topology), `adapters: ${topology}`);
  }
});

test('"what it cannot do" is generated from the model\'s held-out skill table: every kind it abstains on, every set and CalDec site', () => {
  const report = JSON.parse(fs.readFileSync(path.join(MODEL_DIR, 'report.json'), 'utf8')) as Report;
  const skill = report.skill;
  assert.ok(skill, 'report.json has a skill section');
  const md = renderCannotDo(report);
  for (const a of skill.abstains) assert.ok(md.includes(a.unit), `names ${a.unit}`);
  for (const r of [...skill.sets, ...skill.caldec]) assert.ok(md.includes(r.name), `lists ${r.name}`);
  const guide = fs.readFileSync(path.join(DOCS_DIR, 'guide', 'questions.md'), 'utf8');
  assert.ok(guide.includes('<!--@include: ../_generated/cannot-do.md-->'), 'the questions guide includes it');
});
