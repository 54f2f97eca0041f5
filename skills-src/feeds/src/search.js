// Matching entries against the words of a query: every word must appear in
// the entry's title or summary, in any case; a word matches inside a longer
// one ("deploy" finds "deployments"), as a reader searching a feed expects.

// Quotes and punctuation a model or a person puts around words; `+`, `#` and
// `.` stay, for C++, C# and .NET.
const EDGES = /^["'“”‘’«»()[\]{},;:!?]+|["'“”‘’«»()[\]{},;:!?]+$/g;

/**
 * The words of a query, lower-cased, each once.
 * @param {string} query
 * @returns {string[]}
 */
export function queryWords(query) {
  const words = query
    .split(/\s+/)
    .map((w) => w.replace(EDGES, "").toLowerCase())
    .filter((w) => w !== "");
  return [...new Set(words)];
}

/**
 * Whether every word appears in the title or the (whole) summary.
 * @param {{title: string, text: string}} entry
 * @param {string[]} words
 */
export function matches(entry, words) {
  const haystack = `${entry.title}\n${entry.text}`.toLowerCase();
  return words.every((w) => haystack.includes(w));
}
