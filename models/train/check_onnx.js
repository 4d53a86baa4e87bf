// One-off cross-check, not part of `make models`: runs the exported ONNX
// files in ONNX Runtime (npm package "onnxruntime-node", installed in a
// scratch folder) against the torch goldens. Usage, from models/:
//   NODE_PATH=/tmp/ort/node_modules node train/check_onnx.js
// NER: every golden text alone, then all of them as one right-padded batch;
// argmax labels must equal the torch labels and padding must not move the
// logits of real positions. tiny-lm: greedy decoding with the KV cache from
// past length 0 must give the golden ids; so must feeding the prompt in two
// chunks, and a left-padded batch of two prompts.
const fs = require("fs");
const ort = require("onnxruntime-node");

const readJSONL = (p) => fs.readFileSync(p, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
const i64 = (rows, n) => {
  const a = new BigInt64Array(rows.length * n);
  rows.forEach((r, i) => r.forEach((v, j) => (a[i * n + j] = BigInt(v))));
  return new ort.Tensor("int64", a, [rows.length, n]);
};

async function ner(name) {
  const cfg = JSON.parse(fs.readFileSync(`${name}/config.json`, "utf8"));
  const s = await ort.InferenceSession.create(`${name}/model.onnx`);
  const gold = readJSONL(`testdata/golden/${name}.jsonl`);
  const L = Object.keys(cfg.id2label).length;
  let bad = 0;
  const single = [];
  for (const g of gold) {
    const n = g.input_ids.length;
    const out = await s.run({ input_ids: i64([g.input_ids], n), attention_mask: i64([g.input_ids.map(() => 1)], n) });
    const lg = out.logits.data;
    single.push(lg);
    for (let t = 0; t < n; t++) {
      let best = 0;
      for (let k = 1; k < L; k++) if (lg[t * L + k] > lg[t * L + best]) best = k;
      if (cfg.id2label[String(best)] !== g.labels[t]) bad++;
    }
  }
  // torch logits of the goldens, if train_ner.py left them in train/out/
  const tl = `train/out/${name}.golden_logits.json`;
  if (fs.existsSync(tl)) {
    const torchLogits = JSON.parse(fs.readFileSync(tl, "utf8"));
    let d = 0;
    torchLogits.forEach((rows, r) => rows.forEach((row, t) => row.forEach((v, k) => (d = Math.max(d, Math.abs(v - single[r][t * L + k]))))));
    console.log(`${name}: max |logit(ORT) - logit(torch)| over the goldens ${d.toExponential(2)}`);
    if (d > 1e-3) bad++;
  }
  const n = Math.max(...gold.map((g) => g.input_ids.length));
  const ids = gold.map((g) => g.input_ids.concat(new Array(n - g.input_ids.length).fill(0)));
  const mask = gold.map((g) => g.input_ids.map(() => 1).concat(new Array(n - g.input_ids.length).fill(0)));
  const out = await s.run({ input_ids: i64(ids, n), attention_mask: i64(mask, n) });
  let maxDiff = 0;
  gold.forEach((g, r) => {
    for (let t = 0; t < g.input_ids.length; t++)
      for (let k = 0; k < L; k++)
        maxDiff = Math.max(maxDiff, Math.abs(out.logits.data[(r * n + t) * L + k] - single[r][t * L + k]));
  });
  console.log(`${name}: ${gold.length} texts, ${bad} label mismatches vs torch, padded-batch max |dlogit| ${maxDiff.toExponential(2)}`);
  return bad === 0 && maxDiff < 1e-3;
}

async function lm() {
  const cfg = JSON.parse(fs.readFileSync("tiny-lm/config.json", "utf8"));
  const s = await ort.InferenceSession.create("tiny-lm/model.onnx");
  const H = cfg.num_attention_heads, D = cfg.head_dim, NL = cfg.num_hidden_layers, V = cfg.vocab_size;
  const emptyPast = (b) => {
    const f = {};
    for (let i = 0; i < NL; i++)
      for (const kv of ["key", "value"]) f[`past_key_values.${i}.${kv}`] = new ort.Tensor("float32", new Float32Array(0), [b, H, 0, D]);
    return f;
  };
  const step = async (idsRows, maskRows, past) => {
    const out = await s.run({ input_ids: i64(idsRows, idsRows[0].length), attention_mask: i64(maskRows, maskRows[0].length), ...past });
    const next = {};
    for (let i = 0; i < NL; i++)
      for (const kv of ["key", "value"]) next[`past_key_values.${i}.${kv}`] = out[`present.${i}.${kv}`];
    return [out.logits, next];
  };
  const argmaxLast = (logits, row) => {
    const [b, sq] = logits.dims;
    const base = (row * sq + sq - 1) * V;
    let best = 0;
    for (let k = 1; k < V; k++) if (logits.data[base + k] > logits.data[base + best]) best = k;
    return best;
  };
  const gold = readJSONL("testdata/golden/tiny-lm.jsonl");
  let ok = true;
  for (const g of gold) {
    for (const split of [g.prompt_ids.length, 1]) {
      let past = emptyPast(1);
      let mask = [];
      let logits;
      const chunks = split === g.prompt_ids.length ? [g.prompt_ids] : [g.prompt_ids.slice(0, 1), g.prompt_ids.slice(1)];
      for (const c of chunks) {
        if (c.length === 0) continue;
        mask = mask.concat(c.map(() => 1));
        [logits, past] = await step([c], [mask], past);
      }
      const got = [];
      for (let t = 0; t < g.greedy_ids.length; t++) {
        const nx = argmaxLast(logits, 0);
        got.push(nx);
        mask = mask.concat([1]);
        [logits, past] = await step([[nx]], [mask], past);
      }
      const same = JSON.stringify(got) === JSON.stringify(g.greedy_ids);
      if (!same) ok = false;
      console.log(`tiny-lm: "${g.prompt}" chunks=${chunks.length} ${same ? "matches" : "DIFFERS"}`);
    }
  }
  // left-padded batch of the first two prompts
  const a = gold[0].prompt_ids, b = gold[1].prompt_ids;
  const n = Math.max(a.length, b.length);
  const pad = (x) => new Array(n - x.length).fill(0).concat(x);
  const pm = (x) => new Array(n - x.length).fill(0).concat(x.map(() => 1));
  let masks = [pm(a), pm(b)];
  let [logits, past] = await step([pad(a), pad(b)], masks, emptyPast(2));
  const got = [[], []];
  for (let t = 0; t < gold[0].greedy_ids.length; t++) {
    const nx = [argmaxLast(logits, 0), argmaxLast(logits, 1)];
    got[0].push(nx[0]);
    got[1].push(nx[1]);
    masks = masks.map((m) => m.concat([1]));
    [logits, past] = await step([[nx[0]], [nx[1]]], masks, past);
  }
  const same = JSON.stringify(got[0]) === JSON.stringify(gold[0].greedy_ids) && JSON.stringify(got[1]) === JSON.stringify(gold[1].greedy_ids);
  console.log(`tiny-lm: left-padded batch of 2 ${same ? "matches" : "DIFFERS"}`);
  return ok && same;
}

async function main() {
  const which = process.argv.slice(2);
  let ok = true;
  for (const name of which.length ? which : ["clinical-ner", "pii", "tiny-lm"]) {
    if (!fs.existsSync(`${name}/model.onnx`)) continue;
    ok = (name === "tiny-lm" ? await lm() : await ner(name)) && ok;
  }
  process.exit(ok ? 0 : 1);
}

main();
