import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DefaultTheme, defineConfig } from 'vitepress';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Written by docs/scripts/openapi.ts (npm run build:docs); absent before the first generation. */
function apiSidebar(): DefaultTheme.SidebarItem[] {
  const file = path.join(here, '..', '_generated', 'api-sidebar.json');
  if (!fs.existsSync(file)) return [{ text: 'API reference', items: [{ text: 'Overview', link: '/api/' }] }];
  return JSON.parse(fs.readFileSync(file, 'utf8')) as DefaultTheme.SidebarItem[];
}

const guide: DefaultTheme.SidebarItem[] = [
  {
    text: 'Guide',
    items: [
      { text: 'Quickstart', link: '/guide/quickstart' },
      { text: 'Questions', link: '/guide/questions' },
      { text: 'Probabilities and calibration', link: '/guide/probabilities' },
      { text: 'Errors and limits', link: '/guide/errors' },
      { text: 'Teach Brier your task', link: '/guide/teach-your-task' },
      { text: 'Learn from a bigger model', link: '/guide/distillation' },
    ],
  },
  {
    text: 'Operate',
    items: [
      { text: 'Accounts, keys and usage', link: '/guide/control-plane' },
      { text: 'Self-hosting and configuration', link: '/guide/self-hosting' },
      { text: 'Custom models and their calibration', link: '/guide/custom-models' },
      { text: 'Scale-out and deployment', link: '/guide/deployment' },
      { text: 'System One compatibility', link: '/guide/compatibility' },
    ],
  },
];

/**
 * Served by the Brier process at /docs (dist/docs). Everything is local: no web fonts, no CDN, no
 * analytics, local search; links to /console and /openapi.json leave the site with target="_self".
 */
export default defineConfig({
  base: '/docs/',
  outDir: '../dist/docs',
  cacheDir: './.vitepress/cache',
  srcExclude: ['_generated/**', 'scripts/**'],
  title: 'Brier',
  description: 'Calibrated decision probabilities over the System One protocol: open and self-hostable.',
  lang: 'en',
  cleanUrls: false,
  lastUpdated: false,
  appearance: true,
  head: [
    ['meta', { name: 'referrer', content: 'no-referrer' }],
    // docs/public/favicon.svg; VitePress does not prefix `head` links with the base.
    ['link', { rel: 'icon', type: 'image/svg+xml', href: '/docs/favicon.svg' }],
  ],
  markdown: { math: false },
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/quickstart', activeMatch: '^/guide/' },
      { text: 'API reference', link: '/api/', activeMatch: '^/api/' },
    ],
    sidebar: { '/guide/': guide, '/api/': apiSidebar(), '/': guide },
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    footer: { message: 'Brier is Apache-2.0 licensed.' },
  },
});
