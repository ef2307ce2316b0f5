import DefaultTheme from 'vitepress/theme-without-fonts';
import { h } from 'vue';
import './custom.css';

/**
 * The default theme without its bundled web font (system fonts only), plus a "Console" link in the
 * nav bar. The console lives outside this site's base (/console), so the link is a plain anchor with
 * target="_self": the VitePress router leaves it to the browser.
 */
export default {
  extends: DefaultTheme,
  Layout: () =>
    h(DefaultTheme.Layout, null, {
      'nav-bar-content-after': () => h('a', { class: 'console-link', href: '/console', target: '_self' }, 'Console'),
    }),
};
