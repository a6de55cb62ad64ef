// The numbers that belong to the model and where each one in use comes from (memories/model/models.py,
// store.py `settings`): the model's row (embedder.ts MODEL_NUMBERS), the environment, or the
// memory's own settings (PUT /settings: the duplicate threshold and the expansion cut-off).

import type { ModelNumbers } from "./embedder";
import { DEFAULT, type Fusion } from "../recall/ranking";
import type { Mode } from "../writes/replace_at_once";
import type { ReviewSetting } from "../review/reviewing";

export type Source = "model" | "environment" | "memory";
export interface Sources { duplicate: Source; review_floor: Source; expand: Source }

/** This process's duplicate threshold, review floor and shipped recall settings: each the model's
 * unless the environment sets it (DUPLICATE_THRESHOLD, REVIEW_FLOOR). */
export function processNumbers(env: Env, numbers: ModelNumbers): [number, number, Fusion, Sources] {
  const threshold = env.DUPLICATE_THRESHOLD ? Number(env.DUPLICATE_THRESHOLD) : numbers.threshold;
  const floor = env.REVIEW_FLOOR ? Number(env.REVIEW_FLOOR) : numbers.floor;
  const sources: Sources = {
    duplicate: env.DUPLICATE_THRESHOLD ? "environment" : "model",
    review_floor: env.REVIEW_FLOOR ? "environment" : "model",
    expand: "model",
  };
  return [threshold, floor, { ...DEFAULT, expand: numbers.expand }, sources];
}

interface Held {
  fusion: Fusion;
  shipped: Fusion;
  threshold: number;
  ownThreshold: number | null;
  floor: number;
  numbers: ModelNumbers;
  sources: Sources;
  embedder: { model: string };
  review: ReviewSetting;
  proposals: Mode;
}

/** GET /settings: the memory's own recall settings, the shipped ones and which differ, its review
 * and proposals settings, and the duplicate threshold, review floor and expansion cut-off in use with where each comes from. */
export function settingsAnswer(state: Held) {
  const [mine, shipped] = [state.fusion, state.shipped];
  const changed = (Object.keys(mine) as (keyof Fusion)[]).filter((k) => mine[k] !== shipped[k]);
  const n = state.numbers;
  return {
    fusion: mine, shipped, changed,
    review: { ...state.review, trusted: [...state.review.trusted] }, proposals: state.proposals,
    model: { id: state.embedder.model, measured: n.measured },
    thresholds: {
      duplicate: { value: state.threshold, from: state.ownThreshold !== null ? "memory" : state.sources.duplicate, model: n.threshold },
      review_floor: { value: state.floor, from: state.sources.review_floor, model: n.floor },
      expand: { value: mine.expand, from: mine.expand !== shipped.expand ? "memory" : state.sources.expand, model: n.expand },
    },
  };
}

/** Equal as Python compares two values decoded from JSON: the same keys and values, in any order,
 * all the way down (the settings' `review` is an object). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const [x, y] = [a as Record<string, unknown>, b as Record<string, unknown>];
    const keys = Object.keys(x);
    return keys.length === Object.keys(y).length && keys.every((k) => k in y && sameJson(x[k], y[k]));
  }
  return a === b;
}
