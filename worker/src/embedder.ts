// Where vectors come from: Workers AI in production, or an HTTP embedder (the Python package's
// `python -m memories embed-server`, the same model the local service runs) for local runs.

import { normalise } from "./vectors";

export interface Embedder {
  model: string;
  dims: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

// Width of the Workers AI embedding models this memory accepts.
const AI_DIMS: Record<string, number> = {
  "@cf/baai/bge-small-en-v1.5": 384,
  "@cf/baai/bge-base-en-v1.5": 768,
  "@cf/baai/bge-large-en-v1.5": 1024,
  "@cf/baai/bge-m3": 1024,
};

export function makeEmbedder(env: Env): Embedder {
  const kind = env.EMBEDDER ?? "ai";
  if (kind === "http") {
    if (!env.EMBEDDER_URL) throw new Error("EMBEDDER=http needs EMBEDDER_URL");
    return new HttpEmbedder(env.EMBEDDER_URL, env.MEMORY_SECRET, env.EMBED_MODEL, Number(env.EMBED_DIMS));
  }
  const model = env.EMBED_MODEL || "@cf/baai/bge-base-en-v1.5";
  if (!model.startsWith("@cf/baai/bge-") || !(model in AI_DIMS)) throw new Error(`EMBED_MODEL ${model} is not a known @cf/baai/bge-* model`);
  return new AiEmbedder(env.AI, model, AI_DIMS[model]);
}

class AiEmbedder implements Embedder {
  constructor(private ai: Ai, public model: string, public dims: number) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out = (await this.ai.run(this.model as keyof AiModels, { text: texts } as never)) as unknown as { data: number[][] };
    return out.data.map(normalise);
  }
}

class HttpEmbedder implements Embedder {
  constructor(private url: string, private secret: string, public model: string, public dims: number) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    const r = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-memory-secret": this.secret },
      body: JSON.stringify({ texts }),
      signal: AbortSignal.timeout(30_000),
    });
    if (!r.ok) throw new Error(`embedder answered ${r.status}`);
    const body = (await r.json()) as { model: string; dims: number; vectors: number[][] };
    if (body.model !== this.model) throw new Error(`embedder serves ${body.model}, this memory uses ${this.model}`);
    // As the embedder sent them (already unit length): the same bits the Python service stores.
    return body.vectors.map((v) => Float32Array.from(v));
  }
}
