// Dates as feeds write them — RFC 822 in RSS (`Tue, 14 May 2024 09:30:00
// GMT`), RFC 3339 in Atom (`2024-05-14T09:30:00+02:00`) — to ISO 8601 UTC.
// Parsed by hand rather than with `Date.parse`, whose leniency differs
// between engines: a feed must read the same under Node and in the sandbox.

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

// RFC 822's zone names, and the US ones feeds still write; minutes east of UTC.
const ZONES = {
  ut: 0, utc: 0, gmt: 0, z: 0,
  est: -300, edt: -240, cst: -360, cdt: -300, mst: -420, mdt: -360, pst: -480, pdt: -420,
  // The rest of the world's abbreviations are ambiguous (IST, BST…): read as UTC.
};

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?$/i;
const RFC822 = /^(?:[A-Za-z]{2,9},?\s+)?(\d{1,2})[\s-]+([A-Za-z]{3,9})\.?[\s-]+(\d{2,4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*([A-Za-z]{1,5}|[+-]\d{4}|[+-]\d{2}:\d{2})?$/;

/** Minutes east of UTC for `+02:00`, `-0500`, `Z`, `EST`; 0 when unknown or absent. */
function offsetMinutes(zone) {
  if (!zone) return 0;
  const numeric = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (numeric) return (numeric[1] === "-" ? -1 : 1) * (Number(numeric[2]) * 60 + Number(numeric[3]));
  return ZONES[zone.toLowerCase()] ?? 0;
}

/** Milliseconds since the epoch, or NaN when a field is out of range. */
function utc(year, month, day, hour, minute, second, offset) {
  if (month < 0 || month > 11 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 60) return NaN;
  const ms = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  // 31 February would roll over into March: not a date.
  if (new Date(ms).getUTCDate() !== day) return NaN;
  return ms - offset * 60000;
}

/**
 * A feed's date as milliseconds since the epoch, or NaN.
 * @param {string} text
 * @returns {number}
 */
export function parseFeedDate(text) {
  const value = text.trim().replace(/\s+/g, " ");
  let m = ISO.exec(value);
  if (m) {
    return utc(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), offsetMinutes(m[7]));
  }
  m = RFC822.exec(value);
  if (m) {
    const month = MONTHS.indexOf(m[2].slice(0, 3).toLowerCase());
    let year = Number(m[3]);
    // RFC 822 two-digit years; 2822 says 00–49 are 20xx.
    if (m[3].length === 2) year += year < 50 ? 2000 : 1900;
    return utc(year, month, Number(m[1]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), offsetMinutes(m[7]));
  }
  return NaN;
}

/**
 * Milliseconds to `2024-05-14T07:30:00Z` (no milliseconds: feeds give none).
 * @param {number} ms
 */
export function isoDate(ms) {
  return new Date(ms).toISOString().replace(/\.000Z$/, "Z");
}
