// Renders chat templates with @huggingface/jinja, the renderer of HuggingFace's JS stack, for
// chat's TestTemplatesRenderAsHuggingFaceJinja: one JSON case per stdin line ({template,
// special, messages}), one JSON result per stdout line ({out} or {error}).
import { Template } from "@huggingface/jinja";
import { createInterface } from "node:readline";

for await (const line of createInterface({ input: process.stdin })) {
  const c = JSON.parse(line);
  try {
    const t = new Template(c.template);
    const out = t.render({
      ...c.special,
      messages: c.messages,
      add_generation_prompt: true,
    });
    console.log(JSON.stringify({ out }));
  } catch (e) {
    console.log(JSON.stringify({ error: String(e.message ?? e) }));
  }
}
