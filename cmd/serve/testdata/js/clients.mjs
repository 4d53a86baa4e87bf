// Runs the ecosystem's own clients against a live Sluice and prints one JSON line per check:
// {"check": name, "text": ..., ...} or {"check": name, "error": ...}. The Go test
// (cmd/serve TestEcosystemClients) starts the server, runs this, and judges the lines.
//
//   node clients.mjs http://127.0.0.1:PORT "prompt" maxTokens [cut | gateway | tools | embeddings | rerank | structured SCHEMA_DIR]
//
// With SLUICE_TEST_API_KEY set, every client sends that key the way it sends its own (OpenAI's
// and HuggingFace's: "Authorization: Bearer <key>").
import OpenAI from "openai";
import { InferenceClient } from "@huggingface/inference";
import { InferenceClient as TGIClient } from "hf-inference-tgi";

const [base, prompt, maxTokensArg, mode] = process.argv.slice(2);
const maxTokens = Number(maxTokensArg);

function report(check, fields) {
  console.log(JSON.stringify({ check, ...fields }));
}

async function run(check, fn) {
  try {
    report(check, await fn());
  } catch (e) {
    report(check, { error: String(e && e.message ? e.message : e), status: e && e.status });
  }
}

const apiKey = process.env.SLUICE_TEST_API_KEY ?? "";
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: apiKey || "unused", maxRetries: 0 });
const tgi = new TGIClient(apiKey, { endpointUrl: base, retry_on_error: false });
const messages = [{ role: "user", content: prompt }];

// "gateway": the chat API through the privacy gateway's face, whole and streamed, and with a
// tool.
if (mode === "gateway") {
  const gw = new OpenAI({ baseURL: `${base}/gateway/v1`, apiKey: apiKey || "unused", maxRetries: 0 });
  await run("gateway-chat", async () => {
    const c = await gw.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0 });
    return { text: c.choices[0].message.content, role: c.choices[0].message.role, finish: c.choices[0].finish_reason };
  });
  await run("gateway-chat-stream", async () => {
    const s = await gw.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0, stream: true });
    let text = "";
    let role = null;
    let finish = null;
    for await (const chunk of s) {
      for (const ch of chunk.choices) {
        text += ch.delta.content ?? "";
        role = ch.delta.role ?? role;
        finish = ch.finish_reason ?? finish;
      }
    }
    return { text, role, finish };
  });
  // A tool whose descriptions name someone, as OpenAI's own examples do ("e.g. San
  // Francisco, CA"): the gateway redacts them in place rather than refusing the call.
  await run("gateway-chat-tools", async () => {
    const tools = [{ type: "function", function: { name: "lookup", description: "Finds a patient's chart, e.g. Maria Gonzalez's",
      parameters: { type: "object", properties: { who: { type: "string", description: "the patient, e.g. Maria Gonzalez" } } } } }];
    const c = await gw.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0, tools });
    return { text: c.choices[0].message.content, role: c.choices[0].message.role, finish: c.choices[0].finish_reason };
  });
  process.exit(0);
}

// "structured": answers held to the JSON schemas in the directory given after the mode, by
// OpenAI's client (response_format json_schema, strict; whole and streamed), json_object, and
// TGI's grammar (json and regex) through HuggingFace's TGI client.
if (mode === "structured") {
  const { readdirSync, readFileSync } = await import("node:fs");
  const dir = process.argv[6];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
    const schema = JSON.parse(readFileSync(`${dir}/${file}`, "utf8"));
    const response_format = { type: "json_schema", json_schema: { name: file.replace(".json", ""), schema, strict: true } };
    await run(`schema-${file}`, async () => {
      const c = await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0, response_format });
      return { text: c.choices[0].message.content, finish: c.choices[0].finish_reason };
    });
    await run(`schema-stream-${file}`, async () => {
      const s = await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0, response_format, stream: true });
      let text = "";
      let finish = null;
      for await (const chunk of s) {
        for (const ch of chunk.choices) {
          text += ch.delta.content ?? "";
          finish = ch.finish_reason ?? finish;
        }
      }
      return { text, finish };
    });
  }
  await run("json-object", async () => {
    const c = await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0,
      response_format: { type: "json_object" } });
    return { text: c.choices[0].message.content, finish: c.choices[0].finish_reason };
  });
  await run("completions-json-object", async () => {
    const c = await openai.completions.create({ model: "tiny-lm", prompt, max_tokens: maxTokens, temperature: 0,
      response_format: { type: "json_object" } });
    return { text: c.choices[0].text, finish: c.choices[0].finish_reason };
  });
  await run("schema-unsupported", async () => {
    await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens,
      response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object", patternProperties: { a: {} } } } } });
    return { text: "no error" };
  });
  await run("tgi-grammar-regex", async () => {
    const out = await tgi.textGeneration({ inputs: prompt, parameters: { max_new_tokens: maxTokens,
      grammar: { type: "regex", value: "(mild|moderate|severe) pain, [0-9]{1,2}/10" } } });
    return { text: out.generated_text };
  });
  await run("tgi-grammar-json-stream", async () => {
    let text = "";
    let finish = null;
    for await (const ev of tgi.textGenerationStream({ inputs: prompt, parameters: { max_new_tokens: maxTokens,
      grammar: { type: "json", value: { type: "object", properties: { pain: { type: "integer", minimum: 0, maximum: 10 } }, required: ["pain"] } } } })) {
      text += ev.token.special ? "" : ev.token.text;
      finish = ev.details?.finish_reason ?? finish;
    }
    return { text, finish };
  });
  process.exit(0);
}

// "tools": function calling through OpenAI's client: a named tool_choice (whole, and streamed
// through the client's own stream helper, which assembles the tool-call deltas and checks
// them), "required" with two tools, "auto" (and auto with a strict tool), and a conversation
// that carries a call and its result back.
if (mode === "tools") {
  const tools = [
    { type: "function", function: { name: "record_vitals", description: "Record a set of vital signs", strict: true,
      parameters: { type: "object", additionalProperties: false, required: ["heart_rate", "spo2"],
        properties: { heart_rate: { type: "integer", minimum: 20, maximum: 250 }, spo2: { type: "integer", minimum: 50, maximum: 100 } } } } },
    { type: "function", function: { name: "flag_allergy", description: "Flag an allergy",
      parameters: { type: "object", required: ["substance", "severity"],
        properties: { substance: { type: "string", maxLength: 30 }, severity: { enum: ["mild", "moderate", "severe"] } } } } },
  ];
  const calls = (m) => JSON.stringify((m.tool_calls ?? []).map((c) => ({ id: c.id, type: c.type, name: c.function.name, arguments: c.function.arguments })));
  await run("tools-named", async () => {
    const c = await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0, tools,
      tool_choice: { type: "function", function: { name: "record_vitals" } } });
    return { text: calls(c.choices[0].message), final: String(c.choices[0].message.content), finish: c.choices[0].finish_reason };
  });
  await run("tools-named-stream", async () => {
    const s = openai.chat.completions.stream({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0, tools,
      tool_choice: { type: "function", function: { name: "record_vitals" } } });
    let deltas = 0;
    s.on("tool_calls.function.arguments.delta", () => { deltas++; });
    const c = await s.finalChatCompletion();
    return { text: calls(c.choices[0].message), finish: c.choices[0].finish_reason, tokens: deltas };
  });
  await run("tools-required", async () => {
    const c = await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0, tools,
      tool_choice: "required", parallel_tool_calls: false });
    return { text: calls(c.choices[0].message), finish: c.choices[0].finish_reason };
  });
  // Two choices of one stream, their deltas interleaved, each held until it is known a call.
  await run("tools-required-stream", async () => {
    const s = openai.chat.completions.stream({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0, tools,
      tool_choice: "required", parallel_tool_calls: false, n: 2 });
    const c = await s.finalChatCompletion();
    return { text: calls(c.choices[0].message), final: calls(c.choices[1].message), finish: c.choices[0].finish_reason,
      tokens: c.choices.length };
  });
  await run("tools-auto", async () => {
    const c = await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: 8, temperature: 0, tools });
    return { text: String(c.choices[0].message.content), final: calls(c.choices[0].message), finish: c.choices[0].finish_reason };
  });
  // A strict tool under auto: sampled answers, their first characters pushed towards '{' and
  // '"' (tiny-lm's "##{" and "##\"", ids 98 and 9) so that some begin a call; each such call
  // must keep to the parameters. The same answers with the tool not strict, for contrast.
  for (const strict of [true, false]) {
    await run(strict ? "tools-auto-strict" : "tools-auto-loose", async () => {
      const out = [];
      let answers = 0;
      let finish = "stop";
      for (const seed of [1, 2, 3, 4]) {
        const c = await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: 60, temperature: 1, seed, n: 8,
          logit_bias: { 98: 20, 9: 20 }, tools: [{ ...tools[0], function: { ...tools[0].function, strict } }] });
        for (const ch of c.choices) {
          answers++;
          out.push(...JSON.parse(calls(ch.message)));
          if (ch.finish_reason === "tool_calls") finish = "tool_calls"; // some answer called
        }
      }
      return { text: JSON.stringify(out), tokens: answers, finish };
    });
  }
  await run("tools-result", async () => {
    const c = await openai.chat.completions.create({ model: "tiny-lm", max_tokens: 8, temperature: 0, tools, messages: [
      ...messages,
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "record_vitals", arguments: '{"heart_rate":72,"spo2":98}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "recorded" },
    ] });
    return { text: String(c.choices[0].message.content), finish: c.choices[0].finish_reason };
  });
  await run("tools-unknown-choice", async () => {
    await openai.chat.completions.create({ model: "tiny-lm", messages, tools, tool_choice: { type: "function", function: { name: "nope" } } });
    return { text: "no error" };
  });
  process.exit(0);
}

// "embeddings": OpenAI's client (its default base64 vectors, and floats with fewer dimensions)
// and HuggingFace's feature extraction against text-embeddings-inference's /embed. The texts
// are the prompt's lines.
if (mode === "embeddings") {
  const texts = prompt.split("\n");
  const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  await run("openai-embeddings", async () => {
    const r = await openai.embeddings.create({ model: "embed-mini", input: texts });
    return { text: JSON.stringify(r.data.map((d) => d.embedding)), tokens: r.usage.prompt_tokens, final: r.object };
  });
  await run("openai-embeddings-short", async () => {
    const r = await openai.embeddings.create({ model: "embed-mini", input: texts[0], encoding_format: "float", dimensions: 32 });
    return { text: JSON.stringify(r.data.map((d) => d.embedding)), final: String(norm(r.data[0].embedding)) };
  });
  await run("hf-feature-extraction", async () => {
    const tei = new InferenceClient(apiKey, { endpointUrl: `${base}/embed`, retry_on_error: false });
    const out = await tei.featureExtraction({ inputs: texts[0] });
    return { text: JSON.stringify(out) };
  });
  await run("openai-embeddings-wrong-model", async () => {
    await openai.embeddings.create({ model: "nope", input: "x" });
    return { text: "no error" };
  });
  process.exit(0);
}

// "rerank": Cohere's client against /v1/rerank; the prompt's first line is the query, the
// others the documents.
if (mode === "rerank") {
  const { CohereClient } = await import("cohere-ai");
  const co = new CohereClient({ token: apiKey || "unused", baseUrl: base });
  const [query, ...documents] = prompt.split("\n");
  await run("cohere-rerank", async () => {
    const r = await co.rerank({ model: "rerank-mini", query, documents, topN: 2, returnDocuments: true });
    return { text: JSON.stringify(r.results.map((x) => ({ index: x.index, score: x.relevanceScore, doc: x.document?.text }))) };
  });
  process.exit(0);
}

// "cut": streams the server ends early (their deadline passes): each client must raise, never
// take the stream for a finished answer.
if (mode === "cut") {
  const drain = async (stream, text) => {
    let n = 0;
    for await (const ev of stream) n += text(ev) ? 1 : 0;
    return { text: "ended without an error", tokens: n };
  };
  await run("cut-openai", async () => drain(await openai.completions.create({ model: "tiny-lm", prompt,
    max_tokens: maxTokens, temperature: 0, ignore_eos: true, stream: true }), (c) => c.choices?.[0]?.text));
  await run("cut-openai-chat", async () => drain(await openai.chat.completions.create({ model: "tiny-lm", messages,
    max_tokens: maxTokens, temperature: 0, ignore_eos: true, stream: true }), (c) => c.choices?.[0]?.delta?.content));
  await run("cut-tgi", async () => drain(tgi.textGenerationStream({ inputs: prompt,
    parameters: { max_new_tokens: maxTokens } }), (ev) => ev.token?.text));
  process.exit(0);
}

// OpenAI's client: /v1/completions, answer and stream (usage asked for), and an error.
await run("openai", async () => {
  const c = await openai.completions.create({ model: "tiny-lm", prompt, max_tokens: maxTokens, temperature: 0 });
  return { text: c.choices[0].text, finish: c.choices[0].finish_reason, usage: c.usage, object: c.object };
});
await run("openai-stream", async () => {
  const s = await openai.completions.create({ model: "tiny-lm", prompt, max_tokens: maxTokens, temperature: 0,
    stream: true, stream_options: { include_usage: true } });
  let text = "";
  let finish = null;
  let usage = null;
  for await (const chunk of s) {
    for (const ch of chunk.choices) {
      text += ch.text;
      finish = ch.finish_reason ?? finish;
    }
    usage = chunk.usage ?? usage;
  }
  return { text, finish, usage };
});
await run("openai-invalid", async () => {
  await openai.completions.create({ model: "tiny-lm", prompt, max_tokens: 100000 });
  return { text: "no error" };
});

// OpenAI's client: /v1/chat/completions, answer and stream, and /v1/models.
await run("openai-chat", async () => {
  const c = await openai.chat.completions.create({ model: "tiny-lm", messages, max_completion_tokens: maxTokens, temperature: 0 });
  const m = c.choices[0].message;
  return { text: m.content, role: m.role, finish: c.choices[0].finish_reason, usage: c.usage, object: c.object };
});
await run("openai-chat-stream", async () => {
  const s = await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0,
    stream: true, stream_options: { include_usage: true } });
  let text = "";
  let role = null;
  let finish = null;
  let usage = null;
  for await (const chunk of s) {
    for (const ch of chunk.choices) {
      text += ch.delta.content ?? "";
      role = ch.delta.role ?? role;
      finish = ch.finish_reason ?? finish;
    }
    usage = chunk.usage ?? usage;
  }
  return { text, role, finish, usage };
});
// Log probabilities as the openai client hands them to its users: the completions shape
// (tokens, token_logprobs, top_logprobs, text_offset) and the chat shape (content[] with
// token, logprob, bytes, top_logprobs). The Go test judges the summary.
await run("openai-logprobs", async () => {
  const c = await openai.completions.create({ model: "tiny-lm", prompt, max_tokens: maxTokens, temperature: 0, logprobs: 2 });
  const lp = c.choices[0].logprobs;
  return { text: c.choices[0].text, final: lp.tokens.join(""), tokens: lp.tokens.length,
    finish: String(lp.token_logprobs.every((x) => x <= 0) && lp.top_logprobs.every((t) => Object.keys(t).length >= 1 && Object.keys(t).length <= 2)
      && lp.text_offset.length === lp.tokens.length) };
});
await run("openai-chat-logprobs", async () => {
  const c = await openai.chat.completions.create({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0,
    logprobs: true, top_logprobs: 2 });
  const content = c.choices[0].logprobs.content;
  return { text: c.choices[0].message.content, final: content.map((t) => t.token).join(""), tokens: content.length,
    finish: String(content.every((t) => t.logprob <= 0 && t.top_logprobs.length === 2 && Array.isArray(t.bytes))) };
});
await run("openai-models", async () => {
  const ids = [];
  for await (const m of openai.models.list()) ids.push(m.id);
  return { text: ids.join(",") };
});

// HuggingFace's client, current release: it sends text generation to /v1/completions.
const hf = new InferenceClient(apiKey, { endpointUrl: base, retry_on_error: false });
await run("hf", async () => {
  const out = await hf.textGeneration({ inputs: prompt, parameters: { max_new_tokens: maxTokens, temperature: 0 } });
  return { text: out.generated_text };
});
await run("hf-stream", async () => {
  let text = "";
  for await (const ev of hf.textGenerationStream({ inputs: prompt, parameters: { max_new_tokens: maxTokens, temperature: 0 } })) {
    text += ev.choices?.[0]?.text ?? "";
  }
  return { text };
});

// HuggingFace's client as it was up to 4.13.16: TGI's POST / with inputs and parameters.
await run("tgi", async () => {
  const out = await tgi.textGeneration({ inputs: prompt, parameters: { max_new_tokens: maxTokens, details: true } });
  return { text: out.generated_text, finish: out.details?.finish_reason, tokens: out.details?.tokens?.length };
});
await run("tgi-stream", async () => {
  let text = "";
  let final = null;
  for await (const ev of tgi.textGenerationStream({ inputs: prompt, parameters: { max_new_tokens: maxTokens } })) {
    text += ev.token.text;
    final = ev.generated_text ?? final;
  }
  return { text, final };
});

// HuggingFace's client's chat: /v1/chat/completions, answer and stream.
await run("hf-chat", async () => {
  const out = await hf.chatCompletion({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0 });
  return { text: out.choices[0].message.content, finish: out.choices[0].finish_reason };
});
await run("hf-chat-stream", async () => {
  let text = "";
  for await (const ev of hf.chatCompletionStream({ model: "tiny-lm", messages, max_tokens: maxTokens, temperature: 0 })) {
    text += ev.choices?.[0]?.delta?.content ?? "";
  }
  return { text };
});
