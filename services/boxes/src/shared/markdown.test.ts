import { renderMarkdown } from './markdown';

describe('renderMarkdown', () => {
  it('renders like the reference example', () => {
    expect(renderMarkdown('My development Vagrant box')).toBe('<p>My development Vagrant box</p>\n');
    expect(renderMarkdown('')).toBe('');
    expect(renderMarkdown('# Title\n\n* a\n* b')).toBe('<h1>Title</h1>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n');
  });

  it('escapes raw HTML instead of passing it through', () => {
    const html = renderMarkdown('hi <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;');
  });

  it('drops dangerous link and image schemes but keeps safe ones', () => {
    expect(renderMarkdown('[x](javascript:alert(1))')).toBe('<p>x</p>\n');
    expect(renderMarkdown('[x](JaVaScRiPt:alert(1))')).toBe('<p>x</p>\n');
    expect(renderMarkdown('![a](data:text/html,boom)')).toBe('<p>a</p>\n');
    expect(renderMarkdown('[x](https://example.com/a?b=1&c=2 "t")')).toBe('<p><a href="https://example.com/a?b=1&amp;c=2" title="t">x</a></p>\n');
    expect(renderMarkdown('[rel](/docs)')).toBe('<p><a href="/docs">rel</a></p>\n');
  });
});
