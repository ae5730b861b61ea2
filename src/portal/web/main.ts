import 'uplot/dist/uPlot.min.css';
import './portal.css';
import { ApiError, api, UNAUTHORIZED_EVENT } from './api';
import { forgetCreators } from './creators';
import { announce, h } from './dom';
import type { PortalPage } from './page';
import { codesPage, linksPage } from './pages/links';
import { connectionsPage } from './pages/connections';
import { domainsPage } from './pages/domains';
import { eventsPage } from './pages/events';
import { overviewPage } from './pages/overview';
import { setupPage } from './pages/setup';
import { webhooksPage } from './pages/webhooks';
import { currentRange, type Range, rangeQuery } from './period';
import { errorBox, field, submitting } from './ui';

/**
 * The brand portal in the browser: one page script for every /portal/ path. It asks the
 * API whether the session cookie is valid (GET /auth/me); a 401 there, or on any later
 * call, shows the login form in place, and after login the page the URL names.
 */
const PAGES: PortalPage[] = [overviewPage, linksPage, codesPage, eventsPage, setupPage, domainsPage, connectionsPage, webhooksPage];

type Session = { user: { id: string; email: string }; brand: { id: string; name: string } };
let session: Session | null = null;

const main = document.getElementById('main')!;
const top = document.getElementById('top')!;

const pagePath = () => location.pathname.replace(/^\/portal\/?/, '').replace(/\/$/, '');

/** The period of the last page that reads over time: pages without one (setup, domains) pass it on. */
let lastRange: Range = currentRange();

/** The link to a page, with the period when the page reads over time (the navigation carries it). */
function href(page: PortalPage): string {
  const base = `/portal/${page.path}`;
  if (!page.ranged) return base;
  return lastRange.period === '30d' ? base : `${base}?${rangeQuery(lastRange)}`;
}

function renderHeader(s: Session): void {
  top.hidden = false;
  top.replaceChildren(
    h(
      'div',
      { class: 'bar' },
      h('p', { class: 'brand' }, h('span', { class: 'brand-name' }, s.brand.name), h('span', { class: 'brand-sub' }, ' portal')),
      h(
        'div',
        { class: 'account' },
        h('span', { class: 'email' }, s.user.email),
        h('button', { type: 'button', class: 'logout', onclick: logout }, 'Log out'),
      ),
    ),
    h('nav', { 'aria-label': 'Portal pages' }, h('ul', null, PAGES.map((p) => h('li', null, h('a', { href: href(p), 'data-nav': p.path }, p.title))))),
  );
}

/** Shows the page the URL names; `focus` moves focus to its heading (after a navigation). */
async function route(focus: boolean): Promise<void> {
  if (!session) return;
  const page = PAGES.find((p) => p.path === pagePath());
  if (page?.ranged) lastRange = currentRange();
  // A re-render after a control changed keeps focus on that control: arrow keys in a radio group go on.
  const focused = document.activeElement;
  const refocus = !focus && focused instanceof HTMLInputElement && focused.type === 'radio' && main.contains(focused) ? focused.value : null;
  for (const link of top.querySelectorAll<HTMLAnchorElement>('nav a')) {
    const p = PAGES.find((x) => x.path === link.dataset.nav)!;
    link.href = href(p);
    if (p === page) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const view = h('div', { class: 'view' });
  main.replaceChildren(view);
  main.removeAttribute('aria-busy');
  if (!page) {
    document.title = `Not found · ${session.brand.name} portal`;
    view.append(h('h1', { tabindex: -1 }, 'Page not found'), h('p', null, 'This portal has no such page. ', h('a', { href: '/portal/', 'data-nav': '' }, 'Go to the overview.')));
    return;
  }
  document.title = `${page.title} · ${session.brand.name} portal`;
  const rerender = () => void route(false);
  await page.render(view, rerender);
  if (focus) view.querySelector<HTMLElement>('h1')?.focus();
  else if (refocus) view.querySelector<HTMLInputElement>(`input[type="radio"][value="${CSS.escape(refocus)}"]`)?.focus();
}

function showLogin(message?: string): void {
  session = null;
  forgetCreators();
  top.hidden = true;
  top.replaceChildren();
  document.title = 'Log in · Brand portal';
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const form = h(
    'form',
    { class: 'login card', novalidate: false },
    h('h1', { tabindex: -1 }, 'Log in to your brand portal'),
    message ? h('p', { class: 'notice', role: 'status' }, message) : null,
    field('Email', email),
    field('Password', password),
    h('button', { type: 'submit', class: 'primary' }, 'Log in'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submitting(form, async () => {
      session = await api<Session>('POST', '/auth/login', { email: email.value, password: password.value });
      renderHeader(session);
      await route(true);
      announce(`Logged in to ${session.brand.name}`);
    });
  });
  main.replaceChildren(h('div', { class: 'login-wrap' }, form));
  email.focus();
}

async function logout(): Promise<void> {
  try {
    await api('POST', '/auth/logout');
  } catch (err) {
    // An ended session is logged out already; any other failure stays visible.
    if (!(err instanceof ApiError && err.status === 401)) {
      main.prepend(errorBox(err instanceof Error ? err.message : String(err)));
      return;
    }
  }
  history.pushState(null, '', '/portal/');
  showLogin('You are logged out.');
}

async function start(): Promise<void> {
  window.addEventListener(UNAUTHORIZED_EVENT, () => {
    if (session) showLogin('Your session has ended. Log in again.');
  });
  window.addEventListener('popstate', () => void route(true));
  // Links inside the portal change the page without reloading it.
  document.addEventListener('click', (event) => {
    const link = (event.target as Element | null)?.closest?.('a[data-nav]') as HTMLAnchorElement | null;
    if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    history.pushState(null, '', link.href);
    void route(true);
  });
  try {
    session = await api<Session>('GET', '/auth/me');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return showLogin();
    main.replaceChildren(errorBox(err instanceof Error ? err.message : String(err)), h('button', { type: 'button', onclick: () => location.reload() }, 'Try again'));
    return;
  }
  renderHeader(session);
  await route(false);
}

void start();
