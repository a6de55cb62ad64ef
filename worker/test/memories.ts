// A memory for a test, made as the owner makes one: a name is a memory only once created.
import { SELF } from "cloudflare:test";

/** PUT /memories/NAME for `url` (http://memory.test/memories/NAME); gives the url back. */
export async function created(url: string): Promise<string> {
  const { origin, pathname } = new URL(url);
  const r = await SELF.fetch(`${origin}/memories/${pathname.split("/")[2]}`, { method: "PUT", headers: { "x-memory-secret": "test-secret" } });
  if (r.status !== 201 && r.status !== 200) throw new Error(`PUT ${url}: ${r.status} ${await r.text()}`);
  return url;
}
