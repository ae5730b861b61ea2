import { describe, expect, it } from 'vitest';
import { renderInline, renderMarkdown } from '../../src/http/markdown';

const render = (md: string) => renderMarkdown(md).html;

describe('renderMarkdown', () => {
  it('escapes HTML everywhere: text, code spans, code blocks, tables, headings', () => {
    const html = render(
      [
        '# Title <img src=x onerror=alert(1)>',
        '',
        'Text <script>alert(1)</script> & "quotes"',
        '',
        '```html',
        '<script>alert("x")</script>',
        '```',
        '',
        '| a | b |',
        '| - | - |',
        '| <b>x</b> | `<i>` |',
      ].join('\n'),
    );
    expect(html).not.toMatch(/<script|<img|<b>|<i>/);
    expect(html).toContain('<h1 id="title-img-srcx-onerroralert1">Title &lt;img src=x onerror=alert(1)&gt;</h1>');
    expect(html).toContain('<p>Text &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;</p>');
    expect(html).toContain('<pre><code class="language-html">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</code></pre>');
    expect(html).toContain('<td>&lt;b&gt;x&lt;/b&gt;</td><td><code>&lt;i&gt;</code></td>');
  });

  it('keeps http(s), mailto, relative and fragment links, and drops any other scheme to its text', () => {
    expect(renderInline('[a](https://example.com/x?y=1&z=2)')).toBe('<a href="https://example.com/x?y=1&amp;z=2">a</a>');
    expect(renderInline('[a](#section) [b](/docs/api) [c](mailto:x@example.com)')).toBe(
      '<a href="#section">a</a> <a href="/docs/api">b</a> <a href="mailto:x@example.com">c</a>',
    );
    expect(renderInline('[click](javascript:alert(1))')).not.toContain('href');
    expect(renderInline('[click](javascript:alert)')).toBe('click');
    expect(renderInline('[x](data:text/html,hi)')).toBe('x');
    expect(renderInline('[x](//evil.example)')).toBe('x');
  });

  it('renders inline code as written, bold, and backslash escapes', () => {
    expect(renderInline('use `**not bold**` and **bold** \\*star\\*')).toBe('use <code>**not bold**</code> and <strong>bold</strong> *star*');
    expect(renderInline('`` a ` b ``')).toBe('<code>a ` b</code>');
  });

  it('renders lists (nested, numbered, with continuation lines and code) and tables', () => {
    const html = render(
      [
        '- one',
        '  continued',
        '- two',
        '  - nested',
        '',
        '3. three',
        '4. four',
        '',
        '   ```sh',
        '   npm pack',
        '   ```',
        '',
        '| k | v |',
        '| - | - |',
        '| `a \\| b` | c |',
      ].join('\n'),
    );
    expect(html).toContain('<ul><li>one\ncontinued</li><li><p>two</p>\n<ul><li>nested</li></ul></li></ul>');
    expect(html).toContain('<ol start="3"><li>three</li><li><p>four</p>\n<pre><code class="language-sh">npm pack</code></pre></li></ol>');
    expect(html).toContain('<thead><tr><th>k</th><th>v</th></tr></thead><tbody><tr><td><code>a | b</code></td><td>c</td></tr></tbody>');
  });

  it('gives headings unique ids with the prefix, and lists them', () => {
    const ids = new Set<string>();
    const a = renderMarkdown('# Install\n\n## Configure `x`\n\n## Configure x', { idPrefix: 'rn', ids });
    const b = renderMarkdown('# Install', { idPrefix: 'rn', ids });
    expect(a.headings).toEqual([
      { level: 1, id: 'rn-install', text: 'Install' },
      { level: 2, id: 'rn-configure-x', text: 'Configure x' },
      { level: 2, id: 'rn-configure-x-2', text: 'Configure x' },
    ]);
    expect(b.headings[0]!.id).toBe('rn-install-2');
  });
});
