// A small stand-in for the browser's DOM, enough for the stage's view modules to run under Node
// (tests/js/state.test.mjs): elements with classes, attributes, styles, children and listeners, the
// selectors the stage uses (a tag, .classes and [attr=value], comma lists; no combinators), a parser
// for the well-formed HTML the stage writes, fixed boxes, and observers the test fires itself.
// It lays nothing out: every element reports a box of the width `installDom` was given.

const VOID = new Set(["input", "br", "img", "link", "meta", "hr"]);

class ClassList {
  constructor() {
    this.names = new Set();
  }
  add(...n) {
    n.forEach((c) => this.names.add(c));
  }
  remove(...n) {
    n.forEach((c) => this.names.delete(c));
  }
  contains(c) {
    return this.names.has(c);
  }
  toggle(c, on = !this.names.has(c)) {
    if (on) this.names.add(c);
    else this.names.delete(c);
    return on;
  }
}

class Style {
  setProperty(k, v) {
    this[k] = String(v);
  }
  getPropertyValue(k) {
    return this[k] ?? "";
  }
}

// One compound selector (`input[type=range]`, `.legend.x`, `[role="slider"]`) against an element.
function matchesOne(e, sel) {
  const tag = sel.match(/^[a-z][a-z0-9]*/i);
  if (tag && e.tagName !== tag[0].toUpperCase()) return false;
  for (const [, c] of sel.matchAll(/\.([\w-]+)/g)) if (!e.classList.contains(c)) return false;
  for (const [, k, v] of sel.matchAll(/\[([\w-]+)(?:="?([^"\]]*)"?)?\]/g)) {
    const got = e.getAttribute(k);
    if (got === null || (v !== undefined && got !== v)) return false;
  }
  return true;
}

const matches = (e, selector) => selector.split(",").some((s) => matchesOne(e, s.trim()));

// data-show-all -> dataset.showAll, as the browser maps them.
const dataKey = (attr) => attr.slice(5).replace(/-([a-z])/g, (_, c) => c.toUpperCase());

let WIDTH = 1000;

export class FakeElement {
  constructor(tag) {
    this.tagName = tag.toUpperCase();
    this.children = [];
    this.parentElement = null;
    this.attrs = new Map();
    this.dataset = {};
    this.style = new Style();
    this.classList = new ClassList();
    this.listeners = {};
    this.hidden = false;
    this.text = "";
    this.id = "";
    this.tabIndex = -1;
    this.props = { value: "", min: "", max: "", step: "" };
    this.checked = false;
  }
  // An input's value, min, max and step are strings, as the browser keeps them.
  get value() {
    return this.props.value;
  }
  set value(v) {
    this.props.value = String(v);
  }
  get min() {
    return this.props.min;
  }
  set min(v) {
    this.props.min = String(v);
  }
  get max() {
    return this.props.max;
  }
  set max(v) {
    this.props.max = String(v);
  }
  get step() {
    return this.props.step;
  }
  set step(v) {
    this.props.step = String(v);
  }
  get className() {
    return [...this.classList.names].join(" ");
  }
  set className(v) {
    this.classList.names = new Set(String(v).split(/\s+/).filter(Boolean));
  }
  setAttribute(k, v) {
    if (k === "class") this.className = v;
    else if (k.startsWith("data-")) this.dataset[dataKey(k)] = String(v);
    else if (k === "checked") this.checked = true;
    else if (k === "hidden") this.hidden = true;
    else if (["name", "type", "value", "id"].includes(k)) this[k] = String(v);
    else this.attrs.set(k, String(v));
  }
  getAttribute(k) {
    if (k === "class") return this.className;
    if (k.startsWith("data-")) return this.dataset[dataKey(k)] ?? null;
    if (["name", "type", "value", "id"].includes(k)) return this[k] === undefined || this[k] === "" ? null : String(this[k]);
    return this.attrs.has(k) ? this.attrs.get(k) : null;
  }
  removeAttribute(k) {
    this.attrs.delete(k);
  }
  get textContent() {
    return this.text + this.children.map((c) => c.textContent).join("");
  }
  set textContent(v) {
    this.replaceChildren();
    this.text = String(v ?? "");
  }
  set innerHTML(html) {
    this.replaceChildren();
    this.text = "";
    const open = [this];
    for (const [, close, tag, attrs, text] of html.matchAll(/<(\/?)([a-z][a-z0-9]*)([^>]*)>|([^<]+)/gi)) {
      const top = open.at(-1);
      if (text !== undefined) top.text += text.replace(/&nbsp;/g, " ");
      else if (close) open.pop();
      else {
        const e = document.createElement(tag);
        for (const [, k, v] of attrs.matchAll(/([\w-]+)(?:="([^"]*)")?/g)) e.setAttribute(k, v ?? "");
        top.appendChild(e);
        if (!VOID.has(tag.toLowerCase())) open.push(e);
      }
    }
  }
  get innerHTML() {
    return this.textContent;
  }
  appendChild(e) {
    if (typeof e === "string") {
      this.text += e;
      return e;
    }
    e.remove();
    e.parentElement = this;
    this.children.push(e);
    return e;
  }
  append(...nodes) {
    nodes.forEach((n) => this.appendChild(n));
  }
  prepend(e) {
    e.remove();
    e.parentElement = this;
    this.children.unshift(e);
  }
  insertBefore(e, ref) {
    if (!ref) return this.appendChild(e);
    e.remove();
    e.parentElement = this;
    this.children.splice(this.children.indexOf(ref), 0, e);
    return e;
  }
  before(e) {
    this.parentElement.insertBefore(e, this);
  }
  remove() {
    const p = this.parentElement;
    if (p) p.children.splice(p.children.indexOf(this), 1);
    this.parentElement = null;
  }
  replaceChildren(...nodes) {
    for (const c of [...this.children]) c.remove();
    this.text = "";
    this.append(...nodes);
  }
  contains(e) {
    for (let n = e; n; n = n.parentElement) if (n === this) return true;
    return false;
  }
  get isConnected() {
    return document.documentElement.contains(this);
  }
  get previousElementSibling() {
    const p = this.parentElement;
    return p ? (p.children[p.children.indexOf(this) - 1] ?? null) : null;
  }
  matches(selector) {
    return matches(this, selector);
  }
  closest(selector) {
    for (let n = this; n; n = n.parentElement) if (matches(n, selector)) return n;
    return null;
  }
  querySelectorAll(selector) {
    const found = [];
    const walk = (e) => e.children.forEach((c) => (matches(c, selector) && found.push(c), walk(c)));
    walk(this);
    return found;
  }
  querySelector(selector) {
    return this.querySelectorAll(selector)[0] ?? null;
  }
  addEventListener(type, fn) {
    (this.listeners[type] ??= []).push(fn);
  }
  removeEventListener(type, fn) {
    this.listeners[type] = (this.listeners[type] ?? []).filter((f) => f !== fn);
  }
  dispatchEvent(event) {
    fire(this, event.type, { bubbles: event.bubbles });
    return true;
  }
  getBoundingClientRect() {
    return { left: 0, top: 0, right: WIDTH, bottom: 30, width: WIDTH, height: 30, x: 0, y: 0 };
  }
  get clientWidth() {
    return WIDTH;
  }
  get offsetWidth() {
    return WIDTH;
  }
  get offsetHeight() {
    return 30;
  }
  focus() {
    document.activeElement = this;
  }
  setPointerCapture() {}
  animate() {
    return { finished: Promise.resolve() };
  }
  getContext() {
    const noop = () => {};
    return new Proxy({}, { get: (t, k) => (k in t ? t[k] : noop), set: (t, k, v) => ((t[k] = v), true) });
  }
}

// An event of `type` at `target`, bubbling up its parents (and on to the document) unless `bubbles` is false.
export function fire(target, type, props = {}) {
  const path = [];
  for (let n = target; n; n = n.parentElement) path.push(n);
  const event = {
    type, target, defaultPrevented: false, altKey: false, ctrlKey: false, metaKey: false, shiftKey: false,
    preventDefault() {
      this.defaultPrevented = true;
    },
    composedPath: () => path,
    ...props,
  };
  const reach = event.bubbles === false ? [target] : [...path, document];
  for (const node of reach) for (const fn of node.listeners?.[type] ?? []) fn(event);
  return event;
}

class FakeDocument {
  constructor() {
    this.compatMode = "CSS1Compat"; // standards mode, as the app's pages are (KaTeX refuses quirks mode)
    this.listeners = {};
    this.documentElement = new FakeElement("html");
    this.head = this.documentElement.appendChild(new FakeElement("head"));
    this.body = this.documentElement.appendChild(new FakeElement("body"));
    this.activeElement = this.body;
  }
  createElement(tag) {
    return new FakeElement(tag);
  }
  createElementNS(ns, tag) {
    return new FakeElement(tag);
  }
  createTextNode(text) {
    const e = new FakeElement("#text");
    e.text = String(text);
    return e;
  }
  createDocumentFragment() {
    return new FakeElement("#fragment");
  }
  querySelector(selector) {
    return this.documentElement.querySelector(selector);
  }
  addEventListener(type, fn) {
    (this.listeners[type] ??= []).push(fn);
  }
  removeEventListener(type, fn) {
    this.listeners[type] = (this.listeners[type] ?? []).filter((f) => f !== fn);
  }
}

// Observers that record what they observe; the test calls `fire(entries)` where the browser would.
class FakeObserver {
  static made = [];
  constructor(callback) {
    this.callback = callback;
    this.observed = [];
    FakeObserver.made.push(this);
  }
  observe(e) {
    this.observed.push(e);
  }
  disconnect() {
    this.observed = [];
  }
  fire(entries = []) {
    this.callback(entries);
  }
}

// Install the stand-in as the globals the stage reads, every element `width` px wide.
export function installDom(width = 1000) {
  WIDTH = width;
  globalThis.document = new FakeDocument();
  globalThis.window = {
    scrollY: 0, innerHeight: 800, innerWidth: width, devicePixelRatio: 1, matchMedia: () => ({ matches: false }),
  };
  globalThis.Element = FakeElement;
  globalThis.ResizeObserver = class extends FakeObserver {};
  globalThis.IntersectionObserver = class extends FakeObserver {};
  globalThis.MutationObserver = class extends FakeObserver {};
  globalThis.getComputedStyle = () => ({ fontSize: "12px", fontFamily: "sans-serif", getPropertyValue: () => "20" });
  return { observers: FakeObserver.made, setWidth: (w) => (WIDTH = w) };
}
