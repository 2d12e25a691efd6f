// The step's formula with torch's numbers, typeset on the stage beside what it lights up.
//
// Python sends the walkthrough's LaTeX (lnviz.labs.walkthrough: the same formula the step computes,
// every number filled in). KaTeX is vendored in ../vendor/katex/ and loaded only when a formula is
// shown, the first time: the explorer never loads it. Its stylesheet goes twice: into the page's
// head, where its @font-face rules take effect (fonts declared inside a shadow root are ignored),
// and into the stage's own root, where its rules reach the typeset formula. A formula wider than its
// box is typeset smaller until it fits (fitFormula), never cut.

import { FONT } from "./fit.js";

const CSS = new URL("../vendor/katex/katex.min.css", import.meta.url).href;
let katex = null; // the module, once loaded

function sheet(parent, id) {
  if (parent.querySelector(`link[data-katex="${id}"]`)) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = CSS;
  link.dataset.katex = id;
  parent.prepend(link);
}

// Show `latex` in the stage's formula box (or empty it); the latest call wins while KaTeX loads.
export async function showFormula(s, latex) {
  s.formula.hidden = !latex;
  s.formulaWanted = latex || "";
  if (!latex || s.formulaShown === latex) {
    fitFormula(s); // the same, maybe under other words
    return;
  }
  if (!katex) {
    sheet(document.head, "page");
    katex = (await import("../vendor/katex/katex.mjs")).default;
  }
  sheet(s.root, "stage");
  if (s.formulaWanted !== latex) return; // another step came while KaTeX loaded
  katex.render(latex, s.formula, { displayMode: true, throwOnError: false });
  s.formulaShown = latex;
  fitFormula(s);
  document.fonts?.ready.then(() => fitFormula(s)); // KaTeX's own fonts, once loaded, are wider than the fallback
}

// The formula as large as KaTeX sets it (1.21 em) where it fits its box, else smaller, down to FONT.min px (where
// it still doesn't fit, the box scrolls): in lecture mode with the sidebar open at 1280 × 720 the walkthrough's
// widest step, x − μ of a row, is 594 px at 24 px in a corner 472 px wide (issue 46). Wide, the walkthrough's
// formula shares the stage's corner, a box of fixed size, with the step's words: it fits under them too where
// it can (a short screen draws fewer rows, and the corner is shorter), else it keeps the size its width allows,
// and the corner scrolls. Again on every layout.
export function fitFormula(s) {
  const box = s.formula;
  const typeset = box.querySelector(".katex");
  if (box.hidden || !typeset) return;
  let fit = 1;
  const set = (f) => box.style.setProperty("--fit", (fit = f).toFixed(3));
  set(1);
  const least = FONT.min / parseFloat(getComputedStyle(typeset).fontSize);
  const wider = () => box.scrollWidth > box.clientWidth;
  const corner = s.driven && s.wide ? s.controls : null;
  const below = () => (corner ? box.getBoundingClientRect().bottom - corner.getBoundingClientRect().bottom : 0);
  // Smaller while `over`, to `to` (the size that would fit); each try measured, as the size follows the font's only
  // roughly (glyphs' advances are whole pixels where the text is not positioned by subpixels: 446 px wide at 1,
  // 430 at 0.95, 426 at 0.9), and 1 % smaller at least. Whether it fits.
  const shrink = (over, to) => {
    for (let tries = 0; tries < 12 && over(); tries++) {
      const next = Math.max(least, Math.min(fit - 0.01, to()));
      if (next >= fit) return false; // as small as it goes
      set(next);
    }
    return !over();
  };
  shrink(wider, () => (fit * box.clientWidth) / box.scrollWidth);
  const widthFit = fit; // the size its width allows
  const under = () => below() > 0.5 || wider();
  if (!shrink(under, () => (fit * (box.offsetHeight - below())) / box.offsetHeight)) set(widthFit);
}
