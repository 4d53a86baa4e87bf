// Runs gRPC's own Node.js client (@grpc/grpc-js, the contracts loaded by @grpc/proto-loader
// from this repository's .proto files) against a live Sluice and prints one JSON line per
// check: {"check": name, ...} or {"check": name, "error": ...}. The Go test
// (cmd/serve TestGRPCWithNodesClient) starts the server, runs this, and judges the lines.
//
//   node grpc.mjs 127.0.0.1:PORT "note text"
import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";

const [target, note] = process.argv.slice(2);
const load = (file) =>
  grpc.loadPackageDefinition(protoLoader.loadSync(new URL(file, import.meta.url).pathname,
    { keepCase: true, longs: Number, defaults: false, oneofs: true }));
const openmed = load("../../../../openmedpb/openmed.proto").openmed.service.v1;
const inference = load("../../../../inferencepb/inference.proto").inference;
const creds = grpc.credentials.createInsecure();
const om = new openmed.OpenMedService(target, creds);
const v2 = new inference.GRPCInferenceService(target, creds);

function report(check, fields) {
  console.log(JSON.stringify({ check, ...fields }));
}
const unary = (client, method, req) =>
  new Promise((resolve, reject) => client[method](req, (err, res) => (err ? reject(err) : resolve(res))));

async function run(check, fn) {
  try {
    report(check, await fn());
  } catch (e) {
    report(check, { error: String(e && e.details ? e.details : e), code: e && e.code });
  }
}

await run("extract", async () => {
  const r = await unary(om, "Extract", { text: note });
  return { model: r.model_name, entities: r.entities.map((e) => ({ label: e.label, text: e.text, start: e.start, end: e.end })) };
});
await run("deidentify", async () => {
  const r = await unary(om, "Deidentify", { text: note, method: "mask" });
  return { text: r.deidentified_text, redacted: r.num_entities_redacted };
});
await run("empty", () => unary(om, "Extract", { text: "" }));
await run("stream", () =>
  new Promise((resolve, reject) => {
    let text = "", final = null;
    const call = om.StreamDeidentify({ request: { method: "mask" }, chunks: [note.slice(0, 20), note.slice(20)] });
    call.on("data", (m) => (m.final ? (final = m) : (text += m.redacted_text)));
    call.on("error", reject);
    call.on("end", () => resolve({ text, spans: final ? final.spans.length : -1, audit: !!(final && final.audit_record) }));
  }));
await run("infer", async () => {
  const r = await unary(v2, "ModelInfer", {
    model_name: "pii", inputs: [{ name: "text", datatype: "BYTES", shape: [1], contents: { bytes_contents: [Buffer.from(note)] } }],
  });
  return { outputs: r.outputs.map((o) => ({ name: o.name, shape: o.shape, data: o.contents.bytes_contents.map((b) => b.toString()) })) };
});
om.close();
v2.close();
