// Small DOM helpers the view shares.

// A text that did not change is not set again: each set costs the grid a layout pass.
export function put(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

export function el(tag, cls, parent, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
