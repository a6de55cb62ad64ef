// A Workers AI binding for tests that holds a caller to the documented limits of the embedding
// models (developers.cloudflare.com/workers-ai/models/bge-base-en-v1.5 and bge-m3): at most 100
// texts a call, no empty text ("minLength": 1), at most 512 tokens a text for the bge v1.5 models,
// and a rate limit. Tokens are counted as their upper bound, the text's code points after NFD
// plus [CLS] and [SEP] (embedder.ts `AiModel` says why no tokenizer makes more): a text this fake
// takes, the real model takes. Its vectors are bags of words, as vitest.config.ts's embedder's.

import { AI_MODELS } from "../src/model/embedder";

export interface Call {
  model: string;
  input: { text: string[]; pooling?: string; truncate_inputs?: boolean };
}

export function bagOfWords(text: string, dims: number): number[] {
  const v = new Array(dims).fill(0);
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 0;
    for (const c of w) h = (h * 31 + c.charCodeAt(0)) % dims;
    v[h] += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

export class FakeAi {
  calls: Call[] = [];
  refusals = 0;  // calls still to refuse
  refusal = "3040: Capacity temporarily exceeded, please try again.";  // the rate limit's words
  perMinute = Infinity;  // calls allowed in a minute, then the rate limit
  answer: (texts: string[], dims: number) => Record<string, unknown> = (texts, dims) =>
    ({ shape: [texts.length, dims], data: texts.map((t) => bagOfWords(t, dims)) });
  private times: number[] = [];

  constructor(private dims: Record<string, number> = {}) {}

  async run(model: string, input: Call["input"]): Promise<unknown> {
    const dims = this.dims[model] ?? AI_MODELS[model]?.dims;
    if (!dims) throw new Error(`5007: No such model ${model} or task`);
    const now = Date.now();
    this.times = this.times.filter((t) => now - t < 60_000);
    if (this.refusals > 0 || this.times.length >= this.perMinute) {
      this.refusals = Math.max(0, this.refusals - 1);
      throw Object.assign(new Error(this.refusal), { name: "InferenceUpstreamError" });
    }
    this.times.push(now);
    const texts = typeof input.text === "string" ? [input.text] : input.text;
    this.calls.push({ model, input: { ...input, text: texts } });
    if (!Array.isArray(texts) || texts.length > 100) throw new Error(`5006: Error: oneOf at '/text' not met: at most 100 texts, got ${texts.length}`);
    for (const t of texts) {
      if (typeof t !== "string" || t.length === 0) throw new Error("5006: Error: oneOf at '/text' not met: a text is empty");
      const tokens = [...t.normalize("NFD")].length + 2;
      if (model !== "@cf/baai/bge-m3" && tokens > 512) throw new Error(`3006: a text of up to ${tokens} tokens is over the model's 512`);
    }
    await new Promise((r) => setTimeout(r, 1));
    return this.answer(texts, dims);
  }
}
