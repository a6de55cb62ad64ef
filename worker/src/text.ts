// Text as Python's str methods see it, where the Worker must agree with the engine: what a
// stored text is stripped of, and the key exact dedup compares (facts.py `clean_text`, `text_key`).

// str.isspace(): JavaScript's trim() also strips U+FEFF and leaves U+001C-001F and U+0085.
export const SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const EDGES = new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, "g");

/** Python's str.strip(). */
export const strip = (text: string): string => text.replace(EDGES, "");

/** Python's str.casefold(), a code point at a time (no final-sigma context, as casefold): upper
 * then lower case gives it for all but dotless i, capital sharp s and Cherokee, which casefolds
 * to its capitals. Characters newer than one side's Unicode tables may still differ. */
export function casefold(text: string): string {
  return Array.from(text, (c) => {
    const cp = c.codePointAt(0)!;
    if (cp === 0x131 || (cp >= 0x13a0 && cp <= 0x13f5)) return c;
    if (cp === 0x1e9e) return "ss";
    if (cp >= 0xab70 && cp <= 0xabbf) return String.fromCodePoint(cp - 0xab70 + 0x13a0);
    if (cp >= 0x13f8 && cp <= 0x13fd) return String.fromCodePoint(cp - 8);
    return c.toUpperCase().toLowerCase();
  }).join("");
}

/** What exact dedup compares, as text_key() in facts.py: stripped, case-folded. */
export const textKey = (text: string): string => casefold(strip(text));
