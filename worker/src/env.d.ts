// What the Worker and the object are given (wrangler.jsonc, `wrangler secret put`, --var).
interface Env {
  MEMORY: DurableObjectNamespace<import("./memory").MemoryObject>;
  DIRECTORY: DurableObjectNamespace<import("./serving/directory").Directory>;  // the memories' names (directory.ts)
  AI: Ai;
  MEMORY_SECRET: string;
  EMBEDDER?: "ai" | "http";  // Workers AI in production; http for local runs and tests
  EMBEDDER_URL?: string;  // with EMBEDDER=http: `python -m memories embed-server`
  EMBED_MODEL: string;  // with EMBEDDER=ai: any @cf/baai/bge-* model
  EMBED_DIMS?: string;  // with EMBEDDER=http: the model's width
  DUPLICATE_THRESHOLD?: string;  // cosine at or above which a new fact is a near duplicate
  REVIEW_FLOOR?: string;  // cosine at or above which pairs are kept for review (0.80)
  MEMORY_HISTORY?: string;  // history entries kept per memory (10000): how far back undo reaches
  MEMORY_RECALL_LOG?: string;  // recalls kept in the recall log (2000); 0 logs none
  MEMORY_IMPORT_IDLE_SECONDS?: string;  // an import with no batch for this long (60) no longer holds the memory (one_import.ts)
  MEMORY_BUDGET_BYTES?: string;  // bytes the vectors and words in memory may take (100 MiB): past it a write is a 507
}

declare module "*.json" {
  const value: Record<string, unknown>;
  export default value;
}
