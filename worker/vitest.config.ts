import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// A bag-of-words embedder standing in for the model (these are unit tests of the object's
// internals; the contract suite in tests/ runs the real model through embed-server). It
// answers a little later than asked, so concurrent requests interleave at the object's await.
function fakeEmbedder(request: Request): Promise<Response> | Response {
  if (new URL(request.url).pathname !== "/embed") return new Response("no such host", { status: 599 });
  return request.json().then(async (body) => {
    const { texts } = body as { texts: string[] };
    await new Promise((r) => setTimeout(r, 5));
    const vectors = texts.map((t) => {
      const v = new Array(16).fill(0);
      for (const w of t.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
        let h = 0;
        for (const c of w) h = (h * 31 + c.charCodeAt(0)) % 16;
        v[h] += 1;
      }
      const n = Math.hypot(...v) || 1;
      return v.map((x) => x / n);
    });
    return Response.json({ model: "fake-bow-16", dims: 16, vectors });
  });
}

export default defineConfig({
  plugins: [
    cloudflareTest({
      // Workers AI has no local runtime: its binding would need an account. The tests embed
      // through the HTTP embedder below instead.
      remoteBindings: false,
      wrangler: { configPath: "./wrangler.jsonc" },
      miniflare: {
        bindings: {
          MEMORY_SECRET: "test-secret", EMBEDDER: "http", EMBEDDER_URL: "http://embedder.test/embed",
          EMBED_MODEL: "fake-bow-16", EMBED_DIMS: "16",
        },
        outboundService: fakeEmbedder,
      },
    }),
  ],
  test: { include: ["test/**/*.test.ts"] },
});
