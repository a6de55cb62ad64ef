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

// str.isupper() of one character; str.isdigit(): the decimal digits and the other digits
// (superscripts, circled digits, ...).
export const UPPER = /^\p{Uppercase}$/u;
export const DIGIT = new RegExp("[\\p{Nd}\\u{b2}-\\u{b3}\\u{b9}\\u{1369}-\\u{1371}\\u{19da}\\u{2070}\\u{2074}-\\u{2079}\\u{2080}-\\u{2089}"
  + "\\u{2460}-\\u{2468}\\u{2474}-\\u{247c}\\u{2488}-\\u{2490}\\u{24ea}\\u{24f5}-\\u{24fd}\\u{24ff}\\u{2776}-\\u{277e}"
  + "\\u{2780}-\\u{2788}\\u{278a}-\\u{2792}\\u{10a40}-\\u{10a43}\\u{10e60}-\\u{10e68}\\u{11052}-\\u{1105a}\\u{1f100}-\\u{1f10a}]", "u");
/** A string's first character (code point), "" when empty. */
export const first = (s: string) => Array.from(s)[0] ?? "";
