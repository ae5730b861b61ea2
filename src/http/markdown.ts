/**
 * A small Markdown-to-HTML renderer for the service's own documentation pages (headings, lists,
 * code, quotes, tables, links, same-origin images, bold). All text is escaped and only http(s), mailto, relative and
 * #fragment links are kept, so a README can never inject markup or script.
 */

export type Heading = { level: number; id: string; text: string };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const FENCE = /^(\s*)(```+|~~~+)\s*([\w+-]*)/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const SAME_ORIGIN_IMAGE = /^(?![a-z][a-z0-9+.-]*:|\/\/)[\w./-]+\.(svg|png)$/i;
const SAFE_URL = /^(https?:\/\/|mailto:|#|\/(?!\/)|\.{1,2}\/|[\w-][\w./-]*(#[\w-]*)?$)/i;

const indentOf = (line: string) => line.length - line.trimStart().length;
const isBlank = (line: string | undefined) => line === undefined || line.trim() === '';
/** The index of the first non-blank line at or after `from` (lines.length when none). */
function nextNonBlank(lines: string[], from: number): number {
  let i = from;
  while (i < lines.length && isBlank(lines[i])) i++;
  return i;
}

/** Inline Markdown of one paragraph, table cell or heading, as escaped HTML. */
export function renderInline(text: string): string {
  let out = '';
  let rest = text;
  // Code spans first: their content is shown as written, never read as Markdown.
  const code = /(`+)([\s\S]*?[^`])\1(?!`)/;
  for (let m = code.exec(rest); m; m = code.exec(rest)) {
    out += renderText(rest.slice(0, m.index));
    let inner = m[2]!;
    if (inner.startsWith(' ') && inner.endsWith(' ') && inner.trim() !== '') inner = inner.slice(1, -1);
    out += `<code>${escapeHtml(inner)}</code>`;
    rest = rest.slice(m.index + m[0].length);
  }
  return out + renderText(rest);
}

/** Text outside code spans: images, links, bold and backslash escapes. */
function renderText(text: string): string {
  let out = '';
  let rest = text;
  const link = /(!?)\[([^\]]+)\]\(([^()\s]+)\)/;
  for (let m = link.exec(rest); m; m = link.exec(rest)) {
    out += renderPlain(rest.slice(0, m.index));
    const href = m[3]!;
    const label = renderPlain(m[2]!);
    if (m[1]) {
      // Images only from the page's own origin (a relative path): the pages' CSP allows no other.
      out += SAME_ORIGIN_IMAGE.test(href) ? `<img src="${escapeHtml(href)}" alt="${escapeHtml(m[2]!)}">` : label;
    } else {
      out += SAFE_URL.test(href) ? `<a href="${escapeHtml(href)}">${label}</a>` : label;
    }
    rest = rest.slice(m.index + m[0].length);
  }
  return out + renderPlain(rest);
}

function renderPlain(text: string): string {
  return escapeHtml(text.replace(/\\([\\`*_{}[\]()#+\-.!|>])/g, '$1')).replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>');
}

/** Splits a table row on its unescaped pipes; `\|` is a pipe inside a cell (even in code). */
function tableCells(row: string): string[] {
  let line = row.trim();
  if (line.startsWith('|')) line = line.slice(1);
  if (line.endsWith('|') && !line.endsWith('\\|')) line = line.slice(0, -1);
  return line.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll('\\|', '|'));
}

/** Renders Markdown blocks; headings get unique ids (prefixed) and are collected in `headings`. */
export function renderMarkdown(markdown: string, options: { idPrefix?: string; ids?: Set<string> } = {}) {
  const headings: Heading[] = [];
  const ids = options.ids ?? new Set<string>();
  const headingId = (text: string) => {
    const slug = text
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/[^a-z0-9\s-]/g, '')
      .trim()
      .replace(/\s+/g, '-');
    const base = [options.idPrefix, slug || 'section'].filter(Boolean).join('-');
    let id = base;
    for (let n = 2; ids.has(id); n++) id = `${base}-${n}`;
    ids.add(id);
    return id;
  };
  const html = renderBlocks(markdown.replace(/\r\n?/g, '\n').split('\n'), headings, headingId);
  return { html, headings };
}

function renderBlocks(lines: string[], headings: Heading[], headingId: (text: string) => string): string {
  const out: string[] = [];
  let i = 0;
  const startsBlock = (line: string, next: string | undefined) =>
    FENCE.test(line) || HEADING.test(line) || LIST_ITEM.test(line) || QUOTE.test(line) || (line.trimStart().startsWith('|') && next !== undefined && TABLE_RULE.test(next));

  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const [, indent, marker, lang] = fence;
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(marker!); i++) {
        const l = lines[i]!;
        body.push(indentOf(l) >= indent!.length ? l.slice(indent!.length) : l.trimStart());
      }
      i++;
      const cls = lang ? ` class="language-${escapeHtml(lang)}"` : '';
      out.push(`<pre><code${cls}>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const text = heading[2]!;
      const id = headingId(text);
      headings.push({ level, id, text: text.replace(/`/g, '') });
      out.push(`<h${level} id="${id}">${renderInline(text)}</h${level}>`);
      i++;
      continue;
    }
    if (line.trimStart().startsWith('|') && lines[i + 1] !== undefined && TABLE_RULE.test(lines[i + 1]!)) {
      const head = tableCells(line);
      const rows: string[][] = [];
      for (i += 2; i < lines.length && lines[i]!.trimStart().startsWith('|'); i++) rows.push(tableCells(lines[i]!));
      const cells = (row: string[], tag: string) => head.map((_, c) => `<${tag}>${renderInline(row[c] ?? '')}</${tag}>`).join('');
      out.push(
        `<div class="table"><table><thead><tr>${cells(head, 'th')}</tr></thead><tbody>${rows.map((r) => `<tr>${cells(r, 'td')}</tr>`).join('')}</tbody></table></div>`,
      );
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      for (; i < lines.length && QUOTE.test(lines[i]!); i++) body.push(QUOTE.exec(lines[i]!)![1]!);
      out.push(`<blockquote>${renderBlocks(body, headings, headingId)}</blockquote>`);
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      i = renderList(lines, i, out, headings, headingId);
      continue;
    }
    const para: string[] = [];
    for (; i < lines.length && !isBlank(lines[i]) && (para.length === 0 || !startsBlock(lines[i]!, lines[i + 1])); i++) para.push(lines[i]!.trim());
    out.push(`<p>${renderInline(para.join('\n'))}</p>`);
  }
  return out.join('\n');
}

/** One list starting at `start`; answers the index after it. Item bodies are rendered as blocks. */
function renderList(lines: string[], start: number, out: string[], headings: Heading[], headingId: (text: string) => string): number {
  const first = LIST_ITEM.exec(lines[start]!)!;
  const indent = first[1]!.length;
  const ordered = /\d/.test(first[2]!);
  const items: string[][] = [];
  let i = start;
  while (i < lines.length) {
    const m = LIST_ITEM.exec(lines[i]!);
    if (!m || m[1]!.length !== indent || /\d/.test(m[2]!) !== ordered) break;
    const contentIndent = indent + m[2]!.length + 1;
    const body = [m[3]!];
    for (i++; i < lines.length; i++) {
      const l = lines[i]!;
      if (isBlank(l)) {
        const next = nextNonBlank(lines, i);
        if (next < lines.length && indentOf(lines[next]!) > indent) {
          body.push('');
          continue;
        }
        break;
      }
      const sibling = LIST_ITEM.exec(l);
      if (sibling && sibling[1]!.length <= indent) break;
      // Indented lines belong to the item; so does a lazy continuation of its paragraph.
      if (indentOf(l) > indent) body.push(l.slice(Math.min(indentOf(l), contentIndent)));
      else if (!isBlank(body.at(-1)) && !FENCE.test(l) && !HEADING.test(l) && !l.trimStart().startsWith('|')) body.push(l.trim());
      else break;
    }
    items.push(body);
    // Blank lines between two items keep the list going.
    const next = nextNonBlank(lines, i);
    if (next > i && next < lines.length && LIST_ITEM.exec(lines[next]!)?.[1]?.length === indent) i = next;
  }
  const startNumber = ordered ? Number.parseInt(first[2]!, 10) : 1;
  const tag = ordered ? 'ol' : 'ul';
  const open = ordered && startNumber !== 1 ? `<ol start="${startNumber}">` : `<${tag}>`;
  const rendered = items.map((body) => {
    const html = renderBlocks(body, headings, headingId);
    // A one-paragraph item is shown without its <p>, as a tight list is.
    const tight = /^<p>([\s\S]*)<\/p>$/.exec(html);
    return `<li>${tight && !tight[1]!.includes('<p>') ? tight[1] : html}</li>`;
  });
  out.push(`${open}${rendered.join('')}</${tag}>`);
  return i;
}
