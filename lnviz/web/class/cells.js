// A tap-the-cells question's pure part (issue 49), without a DOM: the cells a phone has tapped, the vote text it
// sends, and the class's shares per cell from a revealed round, as plain values that the view draws.
//
// A grid of rows × cols cells (each at most 8) is numbered row-major, 0 to n − 1. A vote is a hexadecimal bit
// mask, bit k cell k, written with ⌈n/4⌉ lowercase digits, most significant first: what Python's
// Question.parse stores (lnviz/labs/classroom/question.py, mask). 64 cells pass 2^53, so the mask is a BigInt.
// tests/js/fixtures/class/cells.json holds Python's own vectors; tests/test_cells_vectors.py keeps it current.

const MAX_TEXT = 32; // the longest vote text Python reads
const HEX = /^[0-9a-fA-F]+$/;

// `tapped` (cell indices) with cell k tapped once more: added if it was not there, else taken out. Sorted.
export function toggle(tapped, k) {
  const cells = new Set(tapped);
  if (cells.has(k)) cells.delete(k);
  else cells.add(k);
  return [...cells].sort((a, b) => a - b);
}

// The vote text of `tapped` in a grid of `n` cells: encode([0, 5], 8) === "21".
export function encode(tapped, n) {
  let bits = 0n;
  for (const k of new Set(tapped)) {
    if (!Number.isInteger(k) || k < 0 || k >= n) throw new RangeError(`${k} is no cell of ${n}`);
    bits |= 1n << BigInt(k);
  }
  return bits.toString(16).padStart(Math.ceil(n / 4), "0");
}

// The cells of vote text `text` in a grid of `n` cells, sorted; null where Python's parse refuses it (not hex,
// too long, or a bit past the last cell). Any case, any leading zeros, blanks around it, as Python reads it.
export function decode(text, n) {
  if (typeof text !== "string" || text.length > MAX_TEXT) return null;
  const hex = text.replace(/^[ \t\n\r\v\f]+|[ \t\n\r\v\f]+$/g, "");
  if (!HEX.test(hex)) return null;
  let bits = BigInt(`0x${hex}`);
  if (bits >> BigInt(n)) return null;
  const cells = [];
  for (let k = 0; bits; k += 1, bits >>= 1n) if (bits & 1n) cells.push(k);
  return cells;
}

// A vote as Python stores it: its canonical text, or null for none.
export function stored(text, n) {
  const cells = decode(text, n);
  return cells === null ? null : encode(cells, n);
}

// Whether vote text `text` is exactly torch's cells `answer` (Question.right).
export function isRight(text, answer, n) {
  const cells = decode(text, n);
  return cells !== null && encode(cells, n) === encode(answer, n);
}

// A revealed round's tally (Python's tally for cells: "0" … "n-1" each cell's taps, "right", "votes") as what the
// projector paints: each cell's share of the votes (0 where nobody voted), its taps, and the two counts.
export function shares(tally, n) {
  const votes = Number(tally.votes || 0);
  const taps = Array.from({ length: n }, (_, k) => Number(tally[String(k)] || 0));
  return { taps, shares: taps.map((t) => (votes ? t / votes : 0)), right: Number(tally.right || 0), votes };
}
