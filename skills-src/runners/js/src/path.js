// Node's `path` (POSIX), the part scripts use.

export const sep = "/";
export const delimiter = ":";

export function normalize(path) {
  const absolute = path.startsWith("/");
  const out = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
    } else out.push(part);
  }
  const joined = out.join("/");
  if (absolute) return `/${joined}`;
  return joined || ".";
}

export function join(...parts) {
  const kept = parts.filter((p) => p !== "");
  return kept.length ? normalize(kept.join("/")) : ".";
}

/** `path` made absolute against `base`, normalised. */
export function resolveFrom(base, path) {
  return normalize(path.startsWith("/") ? path : `${base}/${path}`);
}

export function isAbsolute(path) {
  return path.startsWith("/");
}

export function dirname(path) {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  const at = trimmed.lastIndexOf("/");
  if (at < 0) return ".";
  if (at === 0) return "/";
  return trimmed.slice(0, at);
}

export function basename(path, ext) {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  let base = trimmed.slice(trimmed.lastIndexOf("/") + 1);
  if (ext && base.endsWith(ext) && base !== ext) base = base.slice(0, -ext.length);
  return base;
}

export function extname(path) {
  const base = basename(path);
  const at = base.lastIndexOf(".");
  return at <= 0 ? "" : base.slice(at);
}

export function relative(from, to) {
  const a = normalize(from).split("/").filter(Boolean);
  const b = normalize(to).split("/").filter(Boolean);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return [...a.slice(i).map(() => ".."), ...b.slice(i)].join("/");
}

export function parse(path) {
  const base = basename(path);
  const ext = extname(path);
  return { root: path.startsWith("/") ? "/" : "", dir: dirname(path), base, ext, name: ext ? base.slice(0, -ext.length) : base };
}

export function format(p) {
  const base = p.base ?? `${p.name ?? ""}${p.ext ?? ""}`;
  return p.dir ? `${p.dir}/${base}` : base;
}
