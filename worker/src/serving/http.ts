// Errors and request checks shared by the Worker and the object, worded as memories/serving/service.py
// words them, so a client sees the same contract from either memory.

export class HttpError extends Error {
  constructor(public status: number, public code: string, message: string, public extra: Record<string, unknown> = {},
    public headers: Record<string, string> = {}) {
    super(message);
  }
}

export const invalid = (message: string) => new HttpError(422, "invalid", message);
export const tooLarge = (message: string) => new HttpError(413, "too_large", message);
export const notFound = (message: string) => new HttpError(404, "not_found", message);
export const badRequest = (message: string) => new HttpError(400, "bad_request", message);
/** An undo that would leave what no write may make (a loop of replacements, a fact replaced by one
 * gone or not current): refused even with `force`, unlike `changed_since` (facts.py `UndoRefused`). */
export const undoRefused = (message: string) => new HttpError(409, "undo_refused", message);

export function errorResponse(e: HttpError, headers: Record<string, string> = {}): Response {
  return Response.json({ error: { code: e.code, message: e.message, ...e.extra } }, { status: e.status, headers: { ...e.headers, ...headers } });
}

export const MAX_BODY = 256 * 1024;
// No body of the contract nests past a few levels; the Python service's parser gives up near 1000.
const MAX_DEPTH = 64;

/** How deep a JSON text's arrays and objects nest (brackets inside strings do not count). */
function depth(json: string): number {
  let level = 0, deepest = 0, inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[" || c === "{") deepest = Math.max(deepest, ++level);
    else if (c === "]" || c === "}") level--;
  }
  return deepest;
}

/** The body with Python's JSON extensions, NaN, Infinity and -Infinity as values (outside
 * strings), written as 1e999 and -1e999, which JSON.parse reads as ±Infinity: service.py's
 * json.loads takes them, so `{"k": Infinity}` is a 422 naming the field on both memories, not a
 * 400 here. No field takes a number that is not finite, and each check refuses NaN and Infinity
 * with the same words, so NaN may be read as Infinity. Anything else stays as it was. */
function pythonLiterals(json: string): string {
  if (!/NaN|Infinity/.test(json)) return json;
  let out = "";
  let inString = false;
  let last = "";  // the last character outside strings that is not white space
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (inString) {
      out += c;
      if (c === "\\") out += json[++i] ?? "";
      else if (c === '"') inString = false;
      continue;
    }
    const literal = last === "" || last === ":" || last === "[" || last === "," ? /^(?:-?Infinity|NaN)/.exec(json.slice(i, i + 9)) : null;
    if (literal) {
      out += (literal[0].startsWith("-") ? "-1e999" : "1e999") + " ";  // the space: "Infinity1" stays an error
      i += literal[0].length - 1;
      last = "9";
      continue;
    }
    out += c;
    if (c === '"') inString = true;
    if (!" \t\n\r".includes(c)) last = c;
  }
  return out;
}

export async function readJson(request: Request): Promise<Record<string, unknown>> {
  const declared = request.headers.get("content-length");
  if (declared && /^\d+$/.test(declared) && Number(declared) > MAX_BODY) throw tooLarge(`request body is over ${MAX_BODY} bytes`);
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length > MAX_BODY) throw tooLarge(`request body is over ${MAX_BODY} bytes`);
  let data: unknown;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    data = JSON.parse(pythonLiterals(text));
  } catch {
    throw badRequest("request body is not valid JSON");
  }
  if (depth(text) > MAX_DEPTH) throw badRequest("request body is nested too deeply");
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw badRequest("request body must be a JSON object");
  return data as Record<string, unknown>;
}

// The numbers a query string (or a JSON string) may hold, as service.py reads them
// (tests/golden/parsing.json): ASCII digits, surrounded by ASCII white space at most ("+5" in a
// URL arrives as " 5"). Number() alone would also take "0x10", "" and "Infinity".
const BLANK = /^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g;
const WHOLE = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

export function intParam(value: unknown, name: string, fallback: number, low: number, high: number): number {
  if (value === undefined || value === null || value === "") return fallback;
  const text = typeof value === "string" ? value.replace(BLANK, "") : null;
  let n: number;
  if (typeof value === "number" && Number.isInteger(value)) n = value;
  else if (text !== null && WHOLE.test(text)) n = Number(text);  // past a double's range: ±Infinity, out of range
  else throw invalid(`${name} must be a whole number`);
  if (!(low <= n && n <= high)) throw invalid(`${name} must be between ${low} and ${high}`);
  return n;
}

export function floatParam(value: unknown, name: string, fallback: number, low: number, high: number): number {
  if (value === undefined || value === null || value === "") return fallback;
  const text = typeof value === "string" ? value.replace(BLANK, "") : null;
  const x = typeof value === "number" ? value : text !== null && DECIMAL.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(x)) throw invalid(`${name} must be a number`);  // 1e999 and JSON's 1e400 are Infinity
  if (!(low <= x && x <= high)) throw invalid(`${name} must be between ${low} and ${high}`);
  return x;
}

export function boolParam(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") throw invalid(`${name} must be true or false`);
  return value;
}

/** A boolean of a JSON body, false when absent, else a 422 (service.py: null is no boolean either). */
export function strictBool(value: unknown, name: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw invalid(`${name} must be true or false`);
  return value;
}

export function choiceParam<T extends string>(value: unknown, name: string, fallback: T, choices: readonly T[]): T {
  if (value === undefined || value === null) return fallback;
  if (!choices.includes(value as T)) throw invalid(`${name} must be one of ${choices.join(", ")}`);
  return value as T;
}

/** A string field that must hold text: a lone UTF-16 surrogate is not text. */
export function wellFormed(value: string, name: string): string {
  if (!value.isWellFormed()) throw invalid(`${name} contains a lone surrogate: it is not valid Unicode`);
  return value;
}

export function optionalStr(data: Record<string, unknown>, name: string): string | null {
  const value = data[name];
  if (value !== undefined && value !== null && typeof value !== "string") throw invalid(`${name} must be a string`);
  return value ? wellFormed(value as string, name) : null;
}

/** Compare two secrets in time that does not depend on where they first differ. */
export function sameSecret(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i % (a.length || 1)] ?? 0) ^ b[i];
  return diff === 0 && b.length > 0;
}
