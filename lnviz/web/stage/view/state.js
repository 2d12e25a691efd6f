// The stage's state: one object per stage element, kept across reruns, and every field of it declared here
// with its default. Sealed: a module that sets a field not declared here throws (ES modules are strict), and
// tests/js/state.test.mjs runs every module over it to check that none does. Which module fills each field
// says where to read more.

export function stageState() {
  return Object.seal({
    // Its lasting DOM, made once (layout.js create)
    root: null, // the stage's element, with its classes (wide, present, driven, numbers) and data-show
    grid: null, // the CSS grid every block, head and part is placed on
    controls: null, // the controls' box: the ranges, Play, the words, the switch, badge and legends
    tip: null, // the tooltip, shown on hover or focus
    toggle: null, // a narrow stage's LN | BN buttons (narrow.js)
    titles: null, // the blocks' titles { x, ln, bn }
    sizes: null, // in x's title, B's and H's steppers { batch, features }, what is left out, why a size is fixed (steppers.js)
    scrubs: null, // the group of γ's, β's and ε's ranges (controls.js builds them)
    input: {}, // the inputs by name: `fixed`, the colour switch, and each scrubbed control's range
    out: {}, // each scrubbed control's <output>, its value beside the range
    play: null, // the Play / Pause button
    caption: null, // the step's words
    kept: null, // what a change of B or H kept (index.js showResized)
    formula: null, // the step's formula, typeset by KaTeX (formula.js)
    count: null, // "step k of n"
    meta: null, // the colour switch, the badge and the legends, together
    words: null, // the step's words and formula, together
    badge: null, // whose numbers are shown: torch's, the preview, or torch's with the preview's |Δ|
    legends: {}, // the colour legends: `x` and `y` (the outputs)
    scaleNote: null, // under the legends, what fixes x's colours (paint.js)
    resized: null, // the ResizeObserver that lays the stage out again
    seen: null, // the IntersectionObserver that keeps `onScreen` (index.js)
    clicker: null, // the document's keydown listener for a presenter's clicker (index.js)
    send: null, // Streamlit's setTriggerValue, the way to Python (index.js)
    showNorm: null, // showNorm(norm): a narrow stage shows LN or BN (narrow.js)
    fineNote: null, // under a narrow stage's ranges, what a drag across the track moves (narrow.js)
    // The payload and what it decides (index.js receive)
    d: null, // the decoded payload (model.js decode): the window of x, torch's numbers, the controls
    shape: "", // shapeOf(d) of the cells built: another shape builds them again
    cell: null, // the chosen cell [row, col] of the full grid
    steps: null, // Play's steps for this grid and cell (model.js steps)
    step: 0, // the step shown
    driven: false, // the Walkthrough page moves the steps, not Play
    torch: null, // torch's numbers { ln, bn, ctl } for the controls it computed them at
    ctl: null, // the controls shown { gain, bias, eps }: torch's, or a drag's
    dragging: false, // a range is being dragged: the preview is shown
    pending: null, // a released drag awaiting torch's numbers { ctl, shown }, for the badge's |Δ|
    controlNames: "", // the names of the ranges built, to build them again only for others (controls.js)
    formulaWanted: "", // the formula asked for last (formula.js)
    formulaShown: "", // the formula typeset now (formula.js)
    timer: 0, // Play's timeout while it plays, else 0 (play.js)
    speed: 1, // Play's speed beside it: ½, 1 or 2, the session's last choice (play.js)
    onScreen: false, // the stage is on screen: a clicker's keys step Play (index.js)
    told: false, // the page has been told that the stage is drawn, once (index.js tellDrawn)
    // The page's own γ and β sliders, followed with torch's numbers from the server (follow.js)
    // { url, keys, serial }: where to ask, for which controls, which offer (the payload's stage_at); the sliders
    // found, their MutationObserver, the question on its way and its query, the page's presses' listener,
    // draw(data), and the answers asked ahead (by their values' key) with the last of their chain of questions
    follow: {
      url: "", keys: [], serial: null, inputs: [], observer: null, asked: null, query: "", wake: null, draw: null,
      ahead: new Map(), chain: null,
    },
    // The blocks, rebuilt for another shape (layout.js build)
    paints: null, // each block's canvas { x, ln, bn }
    cells: null, // each block's cells { x, ln, bn }, over its canvas
    stats: null, // the statistics' cells { lnMu, lnSd, bnMu, bnSd }
    heads: null, // the rows' and columns' heads and the symbols μ and σ
    noBn: null, // BN's note where B = 1, else null
    bands: null, // the bands over the hovered or chosen row and column { lnA, lnB, bnA, bnB }
    // The layout for the stage's width (layout.js layout)
    lines: null, // the grid lines each block starts on
    cols: null, // the columns drawn { first, shown }: those that fit with their numbers, around the one kept in view (fit.js)
    rows: null, // the rows drawn { first, shown }: all, or in lecture mode those that fit the screen (fit.js rowsFit)
    wide: false, // wide: 2 × 2; narrow: one norm under the controls
    places: 2, // the decimals a cell shows: 2, or 1 in lecture mode
    norm: "ln", // the norm a narrow stage shows (narrow.js)
    geometry: {}, // where each block's cells lie on its canvas, measured once per layout (paint.js)
    // What is painted (paint.js)
    shown: null, // the outputs at the controls shown (model.js outputs)
    ranges: null, // the colour scales' ranges { x, y }
    drawnX: null, // what x's canvas shows, to redraw it only when a step changes it
    hover: null, // the hovered or focused cell or statistic, else null (tooltip.js)
  });
}

// Every field's name, in declaration order.
export const FIELDS = Object.freeze(Object.keys(stageState()));
