// A transformers.js server of one token-classification model, the peer Sluice's served
// figures are compared with (scripts/tjs-peer/run.sh). POST /pii/extract {"text"} answers
// {"entities": [...]} from transformers.js's token-classification pipeline; GET /readyz says
// when the model is loaded. One ONNX Runtime thread, as the Sluice server under comparison.
//
//   node server.mjs MODEL_DIR PORT [fp32|q8]
import http from "node:http";
import path from "node:path";
import { env, pipeline } from "@huggingface/transformers";

const [dir, port, dtype = "fp32"] = process.argv.slice(2);
env.allowRemoteModels = false;
env.localModelPath = path.dirname(path.resolve(dir));
const classify = await pipeline("token-classification", path.basename(dir), {
  dtype,
  session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
});

http
  .createServer((req, res) => {
    if (req.method === "GET" && req.url === "/readyz") {
      res.writeHead(200).end("ok");
      return;
    }
    if (req.method !== "POST" || req.url !== "/pii/extract") {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      try {
        const { text } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const entities = await classify(text);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ text, entities }));
      } catch (err) {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: String(err.name) }));
      }
    });
  })
  .listen(Number(port), "127.0.0.1");
