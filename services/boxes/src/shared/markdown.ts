// Markdown -> HTML for `description_html` and `profile_html` (spec "Box", "Organization").
// Descriptions are user input served to other users, so raw HTML in the markdown is
// escaped (shown as text) and links/images keep only http(s), mailto and relative URLs.
// marked >= 16 ships ESM only: Node >= 20.19 requires it natively (tsx, the esbuild
// bundles), and jest transforms it (jest.config.js transformIgnorePatterns).
import { Marked, type Tokens } from 'marked';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

function safeUrl(href: string): string | null {
  const trimmed = href.trim();
  // Relative and fragment links are fine; absolute ones only with a harmless scheme.
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(trimmed.replace(/[\u0000-\u001f\s]/g, ''))?.[1]?.toLowerCase();
  if (scheme === undefined) return trimmed;
  return scheme === 'http' || scheme === 'https' || scheme === 'mailto' ? trimmed : null;
}

const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(token.text);
    },
    link(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, token: Tokens.Link): string {
      const text = this.parser.parseInline(token.tokens as Tokens.Generic[]);
      const href = safeUrl(token.href);
      if (href === null) return text;
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
      return `<a href="${escapeHtml(href)}"${title}>${text}</a>`;
    },
    image(token: Tokens.Image): string {
      const src = safeUrl(token.href);
      if (src === null) return escapeHtml(token.text);
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
      return `<img src="${escapeHtml(src)}" alt="${escapeHtml(token.text)}"${title}>`;
    },
  },
});

/** Renders markdown as Vagrant Cloud does: `<p>My development Vagrant box</p>\n`. Empty stays empty. */
export function renderMarkdown(markdown: string): string {
  if (markdown.trim() === '') return '';
  return marked.parse(markdown, { async: false });
}
