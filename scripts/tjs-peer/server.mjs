// A transformers.js server of one model, the peer Sluice's served figures are compared with.
// With a token-classification model (scripts/tjs-peer/run.sh), POST /pii/extract {"text"}
// answers {"entities": [...]} from transformers.js's token-classification pipeline. With a
// causal language model (task "generate", scripts/tjs-peer/generate.sh), POST /v1/completions
// streams, as server-sent events in OpenAI's shape, one event per token of the model's own
// generate() (greedy; with ignore_eos every stream runs to max_tokens), then [DONE]; each
// request generates alone, as transformers.js does. GET /readyz says when the model is loaded.
// One ONNX Runtime thread, as the Sluice server under comparison.
//
//   node server.mjs MODEL_DIR PORT [fp32|q8] [classify|generate]
import http from "node:http";
import path from "node:path";
import { AutoModelForCausalLM, AutoTokenizer, env, pipeline } from "@huggingface/transformers";

const [dir, port, dtype = "fp32", task = "classify"] = process.argv.slice(2);
env.allowRemoteModels = false;
env.localModelPath = path.dirname(path.resolve(dir));
const sessionOptions = { intraOpNumThreads: 1, interOpNumThreads: 1 };
const name = path.basename(dir);

if (task === "generate") {
  const tokenizer = await AutoTokenizer.from_pretrained(name);
  const model = await AutoModelForCausalLM.from_pretrained(name, { dtype, session_options: sessionOptions });
  serve("/v1/completions", async (body, res) => {
    const n = body.max_tokens ?? 16;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let prompt = true; // generate() hands the streamer the prompt first
    const streamer = {
      put(ids) {
        if (prompt) {
          prompt = false;
          return;
        }
        const text = tokenizer.decode(ids[0].map(Number), { skip_special_tokens: false });
        res.write(`data: ${JSON.stringify({ object: "text_completion", choices: [{ index: 0, text, finish_reason: null }] })}\n\n`);
      },
      end() {},
    };
    try {
      const inputs = tokenizer(body.prompt ?? "");
      await model.generate({ ...inputs, max_new_tokens: n, min_new_tokens: body.ignore_eos ? n : null, do_sample: false, streamer });
      res.end("data: [DONE]\n\n");
    } catch (err) {
      res.end(`data: ${JSON.stringify({ error: String(err.name) })}\n\n`);
    }
  });
} else {
  const classify = await pipeline("token-classification", name, { dtype, session_options: sessionOptions });
  serve("/pii/extract", async ({ text }, res) => {
    const entities = await classify(text);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ text, entities }));
  });
}

// serve answers GET /readyz, and POST route by handle(the request's JSON body, res); a body
// that is not JSON, or a handler that throws before answering, is a 400 naming the error's
// kind only.
function serve(route, handle) {
  const fail = (res, err) => {
    if (!res.headersSent) {
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: String(err.name) }));
    }
  };
  http
    .createServer((req, res) => {
      if (req.method === "GET" && req.url === "/readyz") {
        res.writeHead(200).end("ok");
        return;
      }
      if (req.method !== "POST" || req.url !== route) {
        res.writeHead(404).end();
        return;
      }
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", async () => {
        try {
          await handle(JSON.parse(Buffer.concat(chunks).toString("utf8")), res);
        } catch (err) {
          fail(res, err);
        }
      });
    })
    .listen(Number(port), "127.0.0.1");
}
