// The class element's few DOM helpers, shared by its views (index.js, check.js). Text goes in as text
// (textContent, spans from the server), never as HTML.

export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

export const txt = (text) => document.createTextNode(text);

// Server-rendered text, [[tag, text], ...] with tag "" (plain), "code" or "strong": each part as text.
export function spans(parent, parts) {
  for (const [tag, text] of parts || []) {
    parent.appendChild(tag ? el(tag === "code" ? "code" : "strong", "", text) : txt(text));
  }
  return parent;
}
