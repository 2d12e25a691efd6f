// The step's formula with torch's numbers, typeset on the stage beside what it lights up.
//
// Python sends the walkthrough's LaTeX (lnviz.labs.walkthrough: the same formula the step computes,
// every number filled in). KaTeX is vendored in ../vendor/katex/ and loaded only when a formula is
// shown, the first time: the explorer never loads it. Its stylesheet goes twice: into the page's
// head, where its @font-face rules take effect (fonts declared inside a shadow root are ignored),
// and into the stage's own root, where its rules reach the typeset formula.

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
  if (!latex || s.formulaShown === latex) return;
  if (!katex) {
    sheet(document.head, "page");
    katex = (await import("../vendor/katex/katex.mjs")).default;
  }
  sheet(s.root, "stage");
  if (s.formulaWanted !== latex) return; // another step came while KaTeX loaded
  katex.render(latex, s.formula, { displayMode: true, throwOnError: false });
  s.formulaShown = latex;
}
