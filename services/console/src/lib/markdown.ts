// README and description rendering (issue 32, item 5: "README rendered (sanitised)"):
// marked turns markdown into HTML, DOMPurify removes anything that could run script or
// reach out (event handlers, javascript: links, iframes, forms, styles). Images from
// other origins would be blocked by the page's CSP anyway (img-src 'self' data:); they
// are dropped here so the page shows no broken images.
import DOMPurify from 'dompurify';
import { marked } from 'marked';

let hooked = false;

export function renderMarkdown(markdown: string): string {
  if (!hooked) {
    hooked = true;
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        node.setAttribute('rel', 'noopener noreferrer nofollow');
        if (/^https?:/i.test(node.getAttribute('href') ?? '')) node.setAttribute('target', '_blank');
      }
      if (node.tagName === 'IMG' && /^(https?:)?\/\//i.test(node.getAttribute('src') ?? '')) {
        const alt = node.getAttribute('alt') ?? '';
        node.replaceWith(document.createTextNode(alt ? `[image: ${alt}]` : ''));
      }
    });
  }
  const html = marked.parse(markdown, { async: false, gfm: true });
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe'],
    FORBID_ATTR: ['style'],
  });
}
