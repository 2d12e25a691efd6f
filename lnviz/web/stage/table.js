// The app's one step table, from lnviz.labs.walkthrough.stage_table: edit the Python, then run
// `python -m lnviz.labs.walkthrough.table_js`, which writes this file (tests/test_stage_fixtures.py
// fails when it is stale). A file, so the browser caches it with the stage's others, not sent with every run.
export default {
 "LN": [
  {
   "norm": "LN",
   "title": "LN · the input row",
   "text": "LayerNorm works on **one sample at a time**: row {i}, its {n} features. No other row is used, so the result is the same at training and test time and for any batch size.",
   "ln": 0,
   "bn": 0,
   "focus": "ln",
   "fly": "",
   "shows": ""
  },
  {
   "norm": "LN",
   "title": "LN · the row's mean",
   "text": "The mean of the row: add its {n} values and divide by {n}.",
   "ln": 1,
   "bn": 0,
   "focus": "ln",
   "fly": "ln-mu",
   "shows": ""
  },
  {
   "norm": "LN",
   "title": "LN · centre the row",
   "text": "Subtract μ from every value of the row. The centred row sums to 0.",
   "ln": 1,
   "bn": 0,
   "focus": "ln",
   "fly": "",
   "shows": "x − μ"
  },
  {
   "norm": "LN",
   "title": "LN · the row's variance",
   "text": "The variance is the mean of the squared centred values (row {i} of x shows them). It divides by {n}, not {n} − 1: the biased estimate, as PyTorch.",
   "ln": 2,
   "bn": 0,
   "focus": "ln",
   "fly": "ln-sd",
   "shows": "(x − μ)²"
  },
  {
   "norm": "LN",
   "title": "LN · normalize the row",
   "text": "Divide the centred row by √(σ² + ε). The row now has mean 0 and variance σ²/(σ² + ε): just under 1 when ε ≪ σ², smaller when ε is comparable to σ². ε keeps the division finite when σ² is 0.",
   "ln": 2,
   "bn": 0,
   "focus": "ln",
   "fly": "",
   "shows": "x̂"
  },
  {
   "norm": "LN",
   "title": "LN · γ and β",
   "text": "Scale by γ and shift by β, **one pair per feature** (γₖ, βₖ along the row), learned and shared by every sample. They set each feature's scale and offset. They cannot give row {i} back its own μ and σ: those are divided out, and every row gets the same γ and β. So scaling one sample by a positive factor leaves its LN output unchanged, up to ε (the invariance table's single-case column).",
   "ln": 3,
   "bn": 0,
   "focus": "ln",
   "fly": "ln-out",
   "shows": ""
  }
 ],
 "BN": [
  {
   "norm": "BN",
   "title": "BN · the input column",
   "text": "BatchNorm works on **one feature at a time**: column {j}, its value in each of the {n} samples. In training mode every sample's output depends on the rest of the batch.",
   "ln": 4,
   "bn": 0,
   "focus": "bn",
   "fly": "",
   "shows": ""
  },
  {
   "norm": "BN",
   "title": "BN · the column's mean",
   "text": "The mean of the column: add its {n} values, one per sample, and divide by {n}.",
   "ln": 4,
   "bn": 1,
   "focus": "bn",
   "fly": "bn-mu",
   "shows": ""
  },
  {
   "norm": "BN",
   "title": "BN · centre the column",
   "text": "Subtract μ from every value of the column. The centred column sums to 0.",
   "ln": 4,
   "bn": 1,
   "focus": "bn",
   "fly": "",
   "shows": "x − μ"
  },
  {
   "norm": "BN",
   "title": "BN · the column's variance",
   "text": "The variance is the mean of the squared centred values (column {j} of x shows them). It divides by {n}, not {n} − 1: the biased estimate PyTorch uses to normalize in training mode.",
   "ln": 4,
   "bn": 2,
   "focus": "bn",
   "fly": "bn-sd",
   "shows": "(x − μ)²"
  },
  {
   "norm": "BN",
   "title": "BN · normalize the column",
   "text": "Divide the centred column by √(σ² + ε). Across the batch, the column now has mean 0 and variance σ²/(σ² + ε): just under 1 when ε ≪ σ², smaller when ε is comparable to σ².",
   "ln": 4,
   "bn": 2,
   "focus": "bn",
   "fly": "",
   "shows": "x̂"
  },
  {
   "norm": "BN",
   "title": "BN · γ and β",
   "text": "Scale by γ and shift by β of feature {j}: the whole column shares **one** γ and one β, since they belong to the feature. Ioffe and Szegedy (2015, §3) chose them so that BN can represent the identity: with the population's statistics, as BN uses at test time, γⱼ = √(Var[xⱼ] + ε) and βⱼ = E[xⱼ] give back xⱼ exactly (the paper writes √Var[xⱼ], leaving ε out). In training mode the batch's own μ and σ² change from batch to batch, so a fixed γⱼ and βⱼ give back x only approximately.",
   "ln": 4,
   "bn": 3,
   "focus": "bn",
   "fly": "bn-out",
   "shows": ""
  }
 ],
 "BN_ONE": [
  {
   "norm": "BN",
   "title": "BN · the input column",
   "text": "BatchNorm works on **one feature at a time**: column {j}, down the batch. With B = 1 the batch holds one sample, so the column is a single value and there is no other sample to normalize it against.",
   "ln": 4,
   "bn": 0,
   "focus": "bn",
   "fly": "",
   "shows": ""
  },
  {
   "norm": "BN",
   "title": "BN · the column's mean",
   "text": "The mean of one value is that value: μ = x.",
   "ln": 4,
   "bn": 1,
   "focus": "bn",
   "fly": "bn-mu",
   "shows": ""
  },
  {
   "norm": "BN",
   "title": "BN · centre the column",
   "text": "Subtract μ from the column's one value: x − μ = 0.",
   "ln": 4,
   "bn": 1,
   "focus": "bn",
   "fly": "",
   "shows": "x − μ"
  },
  {
   "norm": "BN",
   "title": "BN · the column's variance",
   "text": "The biased variance, the mean of the squared centred values, is 0 for one value: σ² = 0. The unbiased one would divide by B − 1 = 0.",
   "ln": 4,
   "bn": 2,
   "focus": "bn",
   "fly": "bn-sd",
   "shows": "(x − μ)²"
  },
  {
   "norm": "BN",
   "title": "BN · normalize the column",
   "text": "Divide the centred value by √(σ² + ε) = √ε. For ε > 0 that gives x̂ = 0, whatever x was; at ε = 0 it is 0/0.",
   "ln": 4,
   "bn": 2,
   "focus": "bn",
   "fly": "",
   "shows": "x̂"
  },
  {
   "norm": "BN",
   "title": "BN · γ and β",
   "text": "Scale by γ and shift by β of feature {j}. For ε > 0, x̂ = 0, so y = β whatever the input: the output carries nothing of x.",
   "ln": 4,
   "bn": 3,
   "focus": "bn",
   "fly": "bn-out",
   "shows": ""
  }
 ],
 "intro": "Press Play, or step with ← → (a clicker's PageDown): how each norm reduces x, in twelve steps.",
 "outro": "Every row the same way, each by its own μ and σ: LayerNorm involves no other sample. Every column by the batch's μ and σ: change one sample's value in a column, and in general every BatchNorm output of that column moves with it.",
 "outro_one": "Every row the same way, each by its own μ and σ: LayerNorm involves no other sample.",
 "done": 4
};
