// The Worker in front of the memories: checks the shared secret, then hands the request to the
// Durable Object of the memory it names. `/memories/NAME/...` is memory NAME; any other path is
// the memory called "default". One object per name is how memories scale out on Cloudflare.
// `GET /memories` lists them (directory.ts) and `PUT /memories/NAME` creates one: a name is a
// memory only once created, so a misspelt one is a 404, not a new memory nobody looks at.

import openapi from "../../docs/openapi.json";
import { directory } from "./serving/directory";
import { HttpError, MAX_BODY, errorResponse, sameSecret, tooLarge } from "./serving/http";

export { Directory } from "./serving/directory";
export { MemoryObject } from "./memory";

// Neither carries fact text. Without the secret the Worker answers them itself: reaching a
// memory's object would wake it, and create it (its storage, its migrations) for a new name.
const PUBLIC_PATHS = new Set(["/health", "/openapi.json"]);
const NAME = "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}";
const NAMED = new RegExp(`^/memories/(${NAME})(/.*)$`);
const LIST = /^\/memories\/?$/;  // GET: the memories' names
const ONE = new RegExp(`^/memories/(${NAME})$`);  // PUT: create it

export function memoryOf(pathname: string): { name: string; path: string } {
  const m = NAMED.exec(pathname);
  return m ? { name: m[1], path: m[2] } : { name: "default", path: pathname };
}

/** /health or /openapi.json without the secret, answered without the memory: that the service
 * is up, and nothing about what the memory holds. */
function publicAnswer(method: string, path: string): Response {
  if (method !== "GET" && method !== "HEAD") {
    return errorResponse(new HttpError(405, "method_not_allowed", `${method} is not allowed on ${path}`), { Allow: "GET" });
  }
  return Response.json(path === "/health" ? { ok: true } : openapi);
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const { name, path } = memoryOf(url.pathname);
    const secret = !!env.MEMORY_SECRET && sameSecret(request.headers.get("x-memory-secret") ?? "", env.MEMORY_SECRET);
    if (PUBLIC_PATHS.has(path) && !secret) return publicAnswer(request.method, path);
    if (!PUBLIC_PATHS.has(path)) {
      if (!env.MEMORY_SECRET) {
        return errorResponse(new HttpError(503, "not_configured", "this Worker has no MEMORY_SECRET: set it with `wrangler secret put MEMORY_SECRET`"));
      }
      if (!secret) return errorResponse(new HttpError(401, "unauthorized", "missing or wrong X-Memory-Secret header"));
    }
    if (LIST.test(url.pathname) || ONE.test(url.pathname)) return memories(request, env, ONE.exec(url.pathname)?.[1]);
    if (url.pathname.startsWith("/memories/") && !NAMED.test(url.pathname)) {
      const name = url.pathname.split("/")[2];
      return errorResponse(new HttpError(404, "not_found",
        `no memory named '${name}': a name is 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit`));
    }
    url.pathname = path;
    // The body is read here, whole and bounded: a body streamed on to an object that answers
    // without reading it (a 404) breaks the stream, and that would reset the object.
    let body: ArrayBuffer | null = null;
    if (request.method !== "GET" && request.method !== "HEAD") {
      const declared = Number(request.headers.get("content-length") ?? 0);
      body = declared > MAX_BODY ? null : await request.arrayBuffer();
      if (declared > MAX_BODY || body!.byteLength > MAX_BODY) return errorResponse(tooLarge(`request body is over ${MAX_BODY} bytes`));
    }
    const stub = env.MEMORY.get(env.MEMORY.idFromName(name));
    return answered(`memory '${name}'`, () => stub.fetch(new Request(url, { method: request.method, headers: request.headers, body })));
  },
} satisfies ExportedHandler<Env>;

/** `GET /memories` (the directory's list) and `PUT /memories/NAME` (201 created, 200 already there). */
function memories(request: Request, env: Env, name: string | undefined): Promise<Response> | Response {
  const allow = name === undefined ? "GET" : "PUT";
  if ((request.method === "HEAD" ? "GET" : request.method) !== allow) {
    const path = new URL(request.url).pathname;
    return errorResponse(new HttpError(405, "method_not_allowed", `${request.method} is not allowed on ${path}`), { Allow: allow });
  }
  if (name === undefined) return answered("the memories' directory", async () => Response.json({ memories: await directory(env).names() }));
  return answered(`memory '${name}'`, async () => {
    const created = await env.MEMORY.get(env.MEMORY.idFromName(name)).create();
    return Response.json({ name, created }, { status: created ? 201 : 200 });
  });
}

/** The object's answer; when the object itself fails (reset, overloaded, over its CPU limit), the
 * contract's JSON, not Cloudflare's error page. Whether a write it was doing was stored is not known here. */
async function answered(who: string, ask: () => Promise<Response>): Promise<Response> {
  try {
    return await ask();
  } catch (e) {
    console.error(`${who}: its Durable Object failed`, e);
    const retry = (e as { retryable?: boolean }).retryable || (e as { overloaded?: boolean }).overloaded;
    return errorResponse(new HttpError(503, "memory_unavailable",
      `${who} could not answer: its Durable Object failed (the Worker's log has the details); `
        + "read it back before sending a write again"), retry ? { "Retry-After": "1" } : {});
  }
}
