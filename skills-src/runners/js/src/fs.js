// A synchronous subset of Node's `fs` over `wasi:filesystem`, for bundle scripts.
//
// Every path is resolved (lexically, like Node) against the host's working
// directory, then opened through the preopened folder that contains it: the
// folders the permission table grants the bundle, and the bundle folder
// itself read-only. Nothing else exists in the sandbox, so a path outside
// them fails with EACCES, whatever the script tries; the runtime enforces
// that, not this module, which only turns WASI's error codes into Node's.

import { getDirectories } from "wasi:filesystem/preopens@0.2.12";
import { normalize, resolveFrom } from "./path.js";

/** WASI error codes as Node names them. */
const CODES = {
  access: "EACCES",
  "not-permitted": "EPERM",
  "no-entry": "ENOENT",
  exist: "EEXIST",
  "is-directory": "EISDIR",
  "not-directory": "ENOTDIR",
  "read-only": "EROFS",
  "not-empty": "ENOTEMPTY",
  "insufficient-space": "ENOSPC",
  "file-too-large": "EFBIG",
  "invalid": "EINVAL",
};

/** A Node-style error: `code`, `syscall`, `path`, and a message naming them. */
export function fsError(code, syscall, path, detail) {
  const err = new Error(`${code}: ${detail ?? code.toLowerCase()}, ${syscall} '${path}'`);
  err.code = code;
  err.syscall = syscall;
  err.path = path;
  return err;
}

let cwd = "/";
let preopens;

/** Set the folder relative paths are relative to (the host's working directory). */
export function setCwd(dir) {
  cwd = normalize(dir || "/");
}

export function getCwd() {
  return cwd;
}

/** The preopened folders, longest path first so the nearest one wins. */
function roots() {
  if (!preopens) {
    preopens = getDirectories()
      .map(([descriptor, path]) => ({ descriptor, path: normalize(path) }))
      .sort((a, b) => b.path.length - a.path.length);
  }
  return preopens;
}

/** The preopen holding `abs` and the path inside it, or an EACCES error. */
function locate(abs, syscall, shown) {
  for (const root of roots()) {
    if (abs === root.path) return { dir: root.descriptor, rel: "." };
    const prefix = root.path === "/" ? "/" : `${root.path}/`;
    if (abs.startsWith(prefix)) return { dir: root.descriptor, rel: abs.slice(prefix.length) };
  }
  const granted = roots().map((r) => r.path).join(", ") || "none";
  throw fsError("EACCES", syscall, shown, `outside the folders this bundle is granted (${granted})`);
}

/** Run a WASI call, turning its error code into a Node error. */
function wasi(syscall, shown, call) {
  try {
    return call();
  } catch (err) {
    const code = typeof err?.payload === "string" ? err.payload : typeof err === "string" ? err : undefined;
    if (code === undefined) throw err;
    throw fsError(CODES[code] ?? "EIO", syscall, shown, code);
  }
}

function target(path, syscall) {
  if (typeof path !== "string") {
    if (path instanceof URL && path.protocol === "file:") path = decodeURIComponent(path.pathname);
    else throw new TypeError(`${syscall}: the path must be a string, got ${typeof path}`);
  }
  const abs = resolveFrom(cwd, path);
  return { ...locate(abs, syscall, path), shown: path };
}

const FOLLOW = { symlinkFollow: true };

function open(path, syscall, openFlags, flags) {
  const t = target(path, syscall);
  return { t, fd: wasi(syscall, t.shown, () => t.dir.openAt(FOLLOW, t.rel, openFlags, flags)) };
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function encodingOf(options) {
  return typeof options === "string" ? options : options?.encoding;
}

function decode(bytes, encoding) {
  if (!encoding || encoding === "buffer") return bytes;
  if (encoding === "utf8" || encoding === "utf-8") return decoder.decode(bytes);
  if (encoding === "latin1" || encoding === "binary") return String.fromCharCode(...bytes);
  throw new TypeError(`unsupported encoding ${encoding}; use "utf8" or none`);
}

function toBytes(data) {
  if (typeof data === "string") return encoder.encode(data);
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return encoder.encode(String(data));
}

/** Set by the runner: what `readFileSync(0)` and `/dev/stdin` read. */
let stdin = new Uint8Array();
export function setStdin(text) {
  stdin = encoder.encode(text ?? "");
}

function readAll(fd, shown) {
  const chunks = [];
  let offset = 0n;
  for (;;) {
    const [chunk, end] = wasi("read", shown, () => fd.read(1n << 16n, offset));
    if (chunk.length) {
      chunks.push(chunk);
      offset += BigInt(chunk.length);
    }
    if (end || chunk.length === 0) break;
  }
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export function readFileSync(path, options) {
  if (path === 0 || path === "/dev/stdin") return decode(stdin, encodingOf(options));
  const { t, fd } = open(path, "open", {}, { read: true });
  return decode(readAll(fd, t.shown), encodingOf(options));
}

function writeAt(path, data, append, syscall) {
  const flags = append ? { create: true } : { create: true, truncate: true };
  const { t, fd } = open(path, syscall, flags, { write: true });
  let offset = append ? wasi("stat", t.shown, () => fd.stat()).size : 0n;
  const bytes = toBytes(data);
  let at = 0;
  while (at < bytes.length) {
    const n = wasi("write", t.shown, () => fd.write(bytes.subarray(at), offset));
    at += Number(n);
    offset += n;
  }
}

export function writeFileSync(path, data) {
  writeAt(path, data, false, "open");
}

export function appendFileSync(path, data) {
  writeAt(path, data, true, "open");
}

class Stats {
  constructor(stat) {
    this.type = stat.type;
    this.size = Number(stat.size);
    const time = (t) => (t ? new Date(Number(t.seconds) * 1000 + Math.floor(t.nanoseconds / 1e6)) : new Date(0));
    this.mtime = time(stat.dataModificationTimestamp);
    this.atime = time(stat.dataAccessTimestamp);
    this.ctime = time(stat.statusChangeTimestamp);
    this.mtimeMs = this.mtime.getTime();
  }
  isFile() {
    return this.type === "regular-file";
  }
  isDirectory() {
    return this.type === "directory";
  }
  isSymbolicLink() {
    return this.type === "symbolic-link";
  }
}

export function statSync(path, options) {
  const t = target(path, "stat");
  try {
    return new Stats(wasi("stat", t.shown, () => t.dir.statAt(FOLLOW, t.rel)));
  } catch (err) {
    if (options?.throwIfNoEntry === false && err.code === "ENOENT") return undefined;
    throw err;
  }
}

export const lstatSync = statSync;

export function existsSync(path) {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

export function readdirSync(path, options) {
  const { t, fd } = open(path, "scandir", { directory: true }, { read: true });
  const stream = wasi("scandir", t.shown, () => fd.readDirectory());
  const entries = [];
  for (;;) {
    const entry = wasi("scandir", t.shown, () => stream.readDirectoryEntry());
    if (!entry) break;
    entries.push(entry);
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (!options?.withFileTypes) return entries.map((e) => e.name);
  return entries.map((e) => ({
    name: e.name,
    isFile: () => e.type === "regular-file",
    isDirectory: () => e.type === "directory",
    isSymbolicLink: () => e.type === "symbolic-link",
  }));
}

export function mkdirSync(path, options) {
  const abs = resolveFrom(cwd, path);
  if (!options?.recursive) {
    const t = target(path, "mkdir");
    wasi("mkdir", t.shown, () => t.dir.createDirectoryAt(t.rel));
    return undefined;
  }
  const parts = abs.split("/").filter(Boolean);
  let made;
  for (let i = 1; i <= parts.length; i++) {
    const step = `/${parts.slice(0, i).join("/")}`;
    // A folder above a granted one exists, though the sandbox cannot see it.
    const above = roots().some((r) => r.path === step || r.path.startsWith(`${step}/`));
    if (above || existsSync(step)) continue;
    const t = target(step, "mkdir");
    wasi("mkdir", step, () => t.dir.createDirectoryAt(t.rel));
    made ??= step;
  }
  return made;
}

export function unlinkSync(path) {
  const t = target(path, "unlink");
  wasi("unlink", t.shown, () => t.dir.unlinkFileAt(t.rel));
}

export function rmdirSync(path) {
  const t = target(path, "rmdir");
  wasi("rmdir", t.shown, () => t.dir.removeDirectoryAt(t.rel));
}

export function renameSync(from, to) {
  const a = target(from, "rename");
  const b = target(to, "rename");
  wasi("rename", a.shown, () => a.dir.renameAt(a.rel, b.dir, b.rel));
}

export function copyFileSync(from, to) {
  writeFileSync(to, readFileSync(from));
}

/** `fs.promises`: the same calls, answered as promises. */
const promised = (f) => async (...args) => f(...args);
export const promises = {
  readFile: promised(readFileSync),
  writeFile: promised(writeFileSync),
  appendFile: promised(appendFileSync),
  readdir: promised(readdirSync),
  stat: promised(statSync),
  lstat: promised(statSync),
  mkdir: promised(mkdirSync),
  unlink: promised(unlinkSync),
  rmdir: promised(rmdirSync),
  rename: promised(renameSync),
  copyFile: promised(copyFileSync),
  access: async (path) => {
    statSync(path);
  },
};

export const constants = { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1 };
export function accessSync(path) {
  statSync(path);
}
