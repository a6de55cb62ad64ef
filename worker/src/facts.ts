// What a fact is and what the object accepts as one (memories/facts.py): the Fact, the limits,
// the input checks worded as the Python store words them, the time stamp and the list cursor.
// The errors with their code and status are http.ts's, shared with the Worker.

import { invalid, tooLarge, wellFormed } from "./http";
import { strip } from "./text";
import { type FactType, TYPES } from "./vectors";

export const MAX_TEXT = 8000;
export const MAX_SOURCE = 200;
export const MAX_QUERY = 32_000;
export const MAX_LIMIT = 100;
export const MAX_RERANK = 20;  // facts a recall embeds again: each is model time
export const MAX_BATCH = 100;
export const MAX_ID = 2n ** 63n - 1n;

export interface Fact {
  id: number;
  text: string;
  type: FactType;
  source: string;
  created_at: string;
  updated_at: string;
}

export type Row = Record<string, SqlStorageValue>;
export const FACT_COLUMNS = "id, text, type, source, created_at, updated_at";
export const asFact = (r: Row): Fact => ({
  id: r.id as number, text: r.text as string, type: r.type as FactType, source: r.source as string,
  created_at: r.created_at as string, updated_at: r.updated_at as string,
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
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) throw invalid("id must be a positive whole number");
  return value;
}

/** A recall's or explain's query, and its type filter when it has one. */
export function checkQuery(query: unknown, type: string | null): string {
  if (typeof query !== "string" || !strip(query)) throw invalid("query is empty");
  if (chars(query) > MAX_QUERY) throw tooLarge(`query is ${chars(query)} characters; the limit is ${MAX_QUERY}`);
  if (type !== null) cleanType(type);
  return wellFormed(query, "query");
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** An ISO-8601 time as the store writes it (UTC, microseconds, Z), as clean_time() in facts.py. */
export function cleanTime(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  const m = ISO.exec(String(value));
  if (!m) throw invalid(`${name} is not an ISO-8601 time`);
  const [, y, mo, d, h, mi, s = "0", frac = "", zone] = m;
  if (!zone) throw invalid(`${name} needs a time zone (end it in Z for UTC)`);
  const offset = zone.toUpperCase() === "Z" ? 0 : (zone[0] === "-" ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi) - offset, Number(s), 0);
  const fields = [Number(mo) <= 12, Number(d) <= 31, Number(h) < 24, Number(mi) < 60, Number(s) < 60];
  if (fields.includes(false) || Number.isNaN(date.getTime())) throw invalid(`${name} is not an ISO-8601 time`);
  return stamp(date, frac.padEnd(6, "0"));
}

export function stamp(date: Date, micros?: string): string {
  const iso = date.toISOString();  // YYYY-MM-DDTHH:MM:SS.mmmZ
  return iso.slice(0, 19) + "." + (micros ?? iso.slice(20, 23) + "000") + "Z";
}

export const encodeCursor = (f: Fact) => btoa(`${f.created_at}|${f.id}`).replaceAll("+", "-").replaceAll("/", "_");

export function decodeCursor(cursor: string): [string, number] {
  try {
    const text = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
    const at = text.lastIndexOf("|");
    const id = text.slice(at + 1);
    if (at < 0 || !/^\d+$/.test(id) || BigInt(id) > MAX_ID) throw new Error();
    return [text.slice(0, at), Number(id)];
  } catch {
    throw invalid("cursor is not one this service gave out");
  }
}
