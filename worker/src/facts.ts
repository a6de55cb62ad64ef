// What a fact is and what the object accepts as one (memories/facts.py): the Fact, the limits,
// the input checks worded as the Python store words them, the time stamp and the list cursor.
// The errors with their code and status are http.ts's, shared with the Worker.

import { invalid, tooLarge, wellFormed } from "./serving/http";
import { strip } from "./text";
import { type FactType, TYPES } from "./storage/vectors";

export const MAX_TEXT = 8000;
export const MAX_SOURCE = 200;
export const MAX_QUERY = 32_000;
export const MAX_LIMIT = 100;
export const MAX_RERANK = 20;  // facts a recall embeds again: each is model time
export const MAX_BATCH = 100;
export const MAX_CLIENT = 64;  // characters of a client name (X-Memory-Client, history.ts), and of a trusted one (reviewing.ts)
export const MAX_ID = 2n ** 63n - 1n;  // SQLite's largest integer: a path's or a cursor's id past it names no fact
export const MAX_FACT_ID = Number.MAX_SAFE_INTEGER;  // 2^53 - 1: the largest id a client may give a fact

export interface Fact {
  id: number;
  text: string;
  type: FactType;
  source: string;
  created_at: string;
  updated_at: string;
  valid_until: string | null;  // after it the fact is no longer current (lifecycle.ts)
  superseded_by: number | null;  // the fact that replaced it (which may since have been deleted)
  reviewed_at: string | null;  // when the owner reviewed it; null: not yet (reviewing.ts)
}

export type Row = Record<string, SqlStorageValue>;
export const FACT_COLUMNS = "id, text, type, source, created_at, updated_at, valid_until, superseded_by, reviewed_at";
export const asFact = (r: Row): Fact => ({
  id: r.id as number, text: r.text as string, type: r.type as FactType, source: r.source as string,
  created_at: r.created_at as string, updated_at: r.updated_at as string,
  valid_until: r.valid_until as string | null, superseded_by: r.superseded_by as number | null,
  reviewed_at: r.reviewed_at as string | null,
});

export const chars = (s: string) => [...s].length;  // Python's len(): code points, not UTF-16 units

export function cleanText(text: unknown): string {
  if (typeof text !== "string") throw invalid("text must be a string");
  const t = strip(wellFormed(text, "text"));
  if (!t) throw invalid("text is empty");
  if (chars(t) > MAX_TEXT) throw tooLarge(`text is ${chars(t)} characters; the limit is ${MAX_TEXT}`);
  return t;
}

export function cleanType(type: unknown): FactType {
  if (!TYPES.includes(type as FactType)) throw invalid(`type must be one of ${TYPES.join(", ")}`);
  return type as FactType;
}

export function cleanSource(source: unknown): string {
  if (typeof source !== "string") throw invalid("source must be a string");
  if (chars(wellFormed(source, "source")) > MAX_SOURCE) throw tooLarge(`source is longer than ${MAX_SOURCE} characters`);
  return strip(source);
}

export function cleanId(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) throw invalid(`id must be a whole number from 1 to ${MAX_FACT_ID}`);
  return value;
}

/** A field that names a fact (superseded_by, a resolve's old and new), as facts.py `clean_id_named`. */
export function cleanIdNamed(value: unknown, name: string): number | null {
  try {
    return cleanId(value);
  } catch {
    throw invalid(`${name} must be a fact id: a whole number from 1 to ${MAX_FACT_ID}`);
  }
}

/** A recall's or explain's query, and its type filter when it has one. */
export function checkQuery(query: unknown, type: string | null): string {
  if (typeof query !== "string" || !strip(query)) throw invalid("query is empty");
  if (chars(query) > MAX_QUERY) throw tooLarge(`query is ${chars(query)} characters; the limit is ${MAX_QUERY}`);
  if (type !== null) cleanType(type);
  return wellFormed(query, "query");
}

// What a time may be (as facts.py's TIME): YYYY-MM-DD, T (or t, or a space), HH:MM, then
// optionally :SS and a fraction of 1 to 6 digits, then Z (or z) or an offset +HH:MM or +HHMM.
// tests/golden/parsing.json holds the cases both sides answer alike.
const TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number) => [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];

/** A time as the store writes it (UTC, microseconds, Z), as clean_time() in facts.py. Any other
 * time, a date that is not in the calendar (2024-02-30, 24:00) or one outside the years 1 to
 * 9999 in UTC: 422. */
export function cleanTime(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  const m = typeof value === "string" ? TIME.exec(value) : null;
  if (!m) throw invalid(`${name} is not an ISO-8601 time`);
  const [y, mo, d, h, mi, s, oh, om] = [1, 2, 3, 4, 5, 6, 10, 11].map((i) => Number(m[i] ?? 0));
  const [frac = "", z, sign] = [m[7], m[8], m[9]];
  const fields = y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(y, mo) && h < 24 && mi < 60 && s < 60 && oh < 24 && om < 60;
  if (!fields) throw invalid(`${name} is not an ISO-8601 time`);
  if (!z && !sign) throw invalid(`${name} needs a time zone (end it in Z for UTC)`);
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);  // not Date.UTC: it reads the years 0 to 99 as 1900 to 1999
  date.setUTCHours(h, mi - (sign === "-" ? -1 : 1) * (oh * 60 + om), s, 0);
  if (!(1 <= date.getUTCFullYear() && date.getUTCFullYear() <= 9999)) throw invalid(`${name} is not an ISO-8601 time`);
  return stamp(date, frac.padEnd(6, "0"));
}

/** 422 when `until` (when given) is before `created` (when known). At it is allowed: an older fact
 * that replaced a newer one ("old is right") left it never current, and a backup gives that back. */
export function validFrom(until: string | null, created: string | null): void {
  if (until !== null && created !== null && until < created) throw invalid("valid_until must not be before the fact's created_at");
}

export function stamp(date: Date, micros?: string): string {
  const iso = date.toISOString();  // YYYY-MM-DDTHH:MM:SS.mmmZ
  return iso.slice(0, 19) + "." + (micros ?? iso.slice(20, 23) + "000") + "Z";
}

// GET /facts's orders, as ORDERS in facts.py: [the column, newest or highest first]. Ties on a
// time are broken by the id, the same way round. Each order's cursor names it, but "created"'s,
// which stays the plain "created_at|id" the memory has always given out.
export const ORDERS = {
  created: ["created_at", true], updated: ["updated_at", true], id: ["id", true],
  created_asc: ["created_at", false], updated_asc: ["updated_at", false], id_asc: ["id", false],
} as const;
export type Order = keyof typeof ORDERS;
export const DEFAULT_ORDER: Order = "created";
const isOrder = (value: unknown): value is Order => typeof value === "string" && Object.hasOwn(ORDERS, value);

export function cleanOrder(value: unknown): Order {
  if (value === undefined || value === null) return DEFAULT_ORDER;
  if (!isOrder(value)) throw invalid(`order must be one of ${Object.keys(ORDERS).join(", ")}`);
  return value;
}

/** URL-safe base64 of "key|id" (the key: the order's time, empty for the id), "order:" before
 * it for every order but "created", as encode_cursor(). */
export function encodeCursor(f: Fact, order: Order = DEFAULT_ORDER): string {
  const column = ORDERS[order][0];
  const key = column === "id" ? "" : f[column];
  const text = `${order === DEFAULT_ORDER ? "" : `${order}:`}${key}|${f.id}`;
  const bytes = new TextEncoder().encode(text);
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_");
}

// What this service gives out: URL-safe base64 with its padding, of "[order:]key|id".
const CURSOR = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?$/;

/** [key, id] of a cursor given out under `order`, as decode_cursor(): the id after its last "|",
 * ASCII digits, 1 to 2^63 - 1 (an id past 2^53 - 1 is not taken from a client, but
 * autoincrement can reach one). Text before a first ":" that names an order other than
 * "created" is the order the cursor was made under; any other text is "created"'s key, as
 * before orders. Another order's cursor: 422. */
export function decodeCursor(cursor: string, order: Order = DEFAULT_ORDER): [string, number] {
  let text: string;
  try {
    if (!cursor || !CURSOR.test(cursor)) throw new Error();
    const bytes = Uint8Array.from(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw invalid("cursor is not one this service gave out");
  }
  const at = text.lastIndexOf("|");
  const id = text.slice(at + 1);
  if (at < 0 || !/^\d{1,30}$/.test(id) || BigInt(id) < 1n || BigInt(id) > MAX_ID) throw invalid("cursor is not one this service gave out");
  let key = text.slice(0, at);
  const colon = key.indexOf(":");
  const head = colon < 0 ? "" : key.slice(0, colon);
  let made: Order = DEFAULT_ORDER;
  if (isOrder(head) && head !== DEFAULT_ORDER) [made, key] = [head, key.slice(colon + 1)];
  if (made !== order) throw invalid(`cursor is from the list in order=${made}, not order=${order}: start that list again without it`);
  if (ORDERS[order][0] === "id" && key) throw invalid("cursor is not one this service gave out");
  return [key, Number(id)];
}
