/**
 * The Agent Reach skill SDK for JavaScript: everything a skill author needs
 * besides `fetch` (for HTTP with clear errors, see `agent-reach-http.js`).
 *
 * A skill is a WebAssembly component that the Agent Reach host runs in a
 * sandbox with exactly the folders, hosts and environment variables the
 * operator's permission table grants it. With this module a skill is one
 * `defineSkill`, a `tool` per tool, and one export line; the JSON Schema the
 * model sees is derived from the declared parameters, and arguments arrive
 * decoded, checked, with defaults filled in.
 *
 * ```js
 * import { defineSkill, s } from "./agent-reach.js";
 *
 * const skill = defineSkill({ name: "hello", version: "0.1.0", description: "Greets people by name." });
 * skill.tool("greet", {
 *   description: "Say hello to someone.",
 *   parameters: { name: s.string({ description: "Who to greet." }) },
 * }, ({ name }) => `Hello, ${name}!`);
 *
 * export const guest = skill.guest;
 * ```
 *
 * The module has no imports: it runs under plain Node.js too, which is how
 * its tests and a skill's unit tests run (`node --test`).
 *
 * @module agent-reach
 */

/** The version of the WIT contract (`agent-reach:skill`) this SDK builds against. */
export const CONTRACT_VERSION = "0.1.0";

/**
 * The contract's error codes, as componentize-js spells the WIT enum cases.
 * @readonly
 * @enum {string}
 */
export const ErrorCode = Object.freeze({
  /** The arguments do not fit the tool's schema or meaning. */
  InvalidArguments: "invalid-arguments",
  /** A file, URL or other named thing does not exist. */
  NotFound: "not-found",
  /** The permission table does not grant what the call needed. */
  Denied: "denied",
  /** Anything else went wrong. */
  Failed: "failed",
});

const CODES = Object.values(ErrorCode);

/**
 * A failed tool call the model can react to: a code and a message that says
 * what went wrong and, where possible, how to fix it. Throw it from a handler.
 */
export class ToolError extends Error {
  /**
   * @param {string} code one of {@link ErrorCode}
   * @param {string} message what went wrong and how to fix it
   */
  constructor(code, message) {
    // A wrong code is a bug in the skill: say so where it is written, not as
    // a trap at the component boundary.
    if (!CODES.includes(code)) {
      throw new TypeError(`ToolError: unknown code ${JSON.stringify(code)}; use one of ${CODES.join(", ")}`);
    }
    super(String(message));
    this.name = "ToolError";
    /** @type {string} */
    this.code = code;
  }
}

/** The arguments are wrong. @param {string} message @returns {ToolError} */
export const invalidArguments = (message) => new ToolError(ErrorCode.InvalidArguments, message);
/** Something named does not exist. @param {string} message @returns {ToolError} */
export const notFound = (message) => new ToolError(ErrorCode.NotFound, message);
/** The permission table does not allow it. @param {string} message @returns {ToolError} */
export const denied = (message) => new ToolError(ErrorCode.Denied, message);
/** Any other failure. @param {string} message @returns {ToolError} */
export const failed = (message) => new ToolError(ErrorCode.Failed, message);

// ---------------------------------------------------------------------------
// Parameters: a declared object becomes a JSON Schema.

/** A JSON Schema with a flag saying whether its property may be left out. */
class Schema {
  /** @param {object} json @param {boolean} isOptional */
  constructor(json, isOptional) {
    this.json = json;
    this.isOptional = isOptional;
  }

  /** The same schema, for a property that may be left out. @returns {Schema} */
  optional() {
    return new Schema(this.json, true);
  }
}

/**
 * Mark a property as optional: `optional(s.string())`, or a plain JSON
 * Schema, `optional({ type: "string" })`. Same as `s.string().optional()`.
 * @param {Schema|object} schema
 * @returns {Schema}
 */
export function optional(schema) {
  return new Schema(schemaOf(schema, "optional()").json, true);
}

/** @param {unknown} value @returns {value is Record<string, unknown>} */
function isPlainObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** @param {unknown} value @param {string} where @returns {Schema} */
function schemaOf(value, where) {
  if (value instanceof Schema) return value;
  if (isPlainObject(value)) return new Schema(value, false);
  throw new TypeError(`${where}: expected a schema (s.string(), s.integer(), …) or a JSON Schema object, got ${JSON.stringify(value)}`);
}

/** @param {Record<string, unknown>} properties @param {object} options @param {string} where */
function objectSchema(properties, options, where) {
  if (!isPlainObject(properties)) {
    throw new TypeError(`${where}: the properties must be an object of schemas, got ${JSON.stringify(properties)}`);
  }
  const props = {};
  const required = [];
  for (const [key, value] of Object.entries(properties)) {
    const schema = schemaOf(value, `${where}.${key}`);
    props[key] = schema.json;
    // A property with a default has a value when left out: requiring it
    // would only make the model spell out the default.
    if (!schema.isOptional && !("default" in schema.json)) required.push(key);
  }
  const json = { type: "object", ...options, properties: props, additionalProperties: false };
  if (required.length > 0) json.required = required;
  return json;
}

/**
 * The schema builder. Every function takes JSON Schema keywords as options
 * (`description`, `default`, `minimum`, `maxLength`, `pattern`, `enum`, …),
 * written as JSON Schema spells them. A property is required unless it is
 * `optional()` or has a `default`.
 */
export const s = Object.freeze({
  /** @param {object} [options] @returns {Schema} */
  string: (options = {}) => new Schema({ type: "string", ...options }, false),
  /** @param {object} [options] @returns {Schema} */
  integer: (options = {}) => new Schema({ type: "integer", ...options }, false),
  /** @param {object} [options] @returns {Schema} */
  number: (options = {}) => new Schema({ type: "number", ...options }, false),
  /** @param {object} [options] @returns {Schema} */
  boolean: (options = {}) => new Schema({ type: "boolean", ...options }, false),
  /**
   * One of the given strings.
   * @param {string[]} values @param {object} [options] @returns {Schema}
   */
  enum: (values, options = {}) => new Schema({ type: "string", enum: [...values], ...options }, false),
  /**
   * A list whose items all match `items`.
   * @param {Schema|object} items @param {object} [options] @returns {Schema}
   */
  array: (items, options = {}) =>
    new Schema({ type: "array", items: schemaOf(items, "s.array()").json, ...options }, false),
  /**
   * An object with exactly these properties (no others).
   * @param {Record<string, Schema|object>} properties @param {object} [options] @returns {Schema}
   */
  object: (properties, options = {}) => new Schema(objectSchema(properties, options, "s.object()"), false),
});

/**
 * The JSON Schema (draft 2020-12) of a tool's arguments object, from its
 * declared parameters: an object of property schemas, or one `s.object()`.
 * @param {Record<string, Schema|object>|Schema|undefined} parameters
 * @param {string} [where] for error messages
 * @returns {object}
 */
export function parametersSchema(parameters, where = "parameters") {
  let json;
  if (parameters === undefined) json = objectSchema({}, {}, where);
  else if (parameters instanceof Schema) json = parameters.json;
  else json = objectSchema(parameters, {}, where);
  if (json.type !== "object") {
    throw new TypeError(`${where}: a tool's arguments are an object; declare its properties, not ${JSON.stringify(json)}`);
  }
  return { $schema: "https://json-schema.org/draft/2020-12/schema", ...json };
}

// ---------------------------------------------------------------------------
// Arguments: checked against the schema, defaults filled in.

const TYPE_CHECKS = {
  string: (v) => typeof v === "string",
  integer: (v) => Number.isInteger(v),
  number: (v) => typeof v === "number" && Number.isFinite(v),
  boolean: (v) => typeof v === "boolean",
  array: (v) => Array.isArray(v),
  object: (v) => isPlainObject(v),
  null: (v) => v === null,
};

/** `limit`, `urls[2]`, `filter.since`; the argument itself when at the top. */
const at = (path) => (path === "" ? "the arguments" : `\`${path}\``);
const join = (path, key) => (path === "" ? key : `${path}.${key}`);

/**
 * Check `value` against the subset of JSON Schema the builder writes (type,
 * enum, const, bounds, lengths, pattern, items, properties, required,
 * additionalProperties) and fill in defaults of missing properties. The host
 * validates arguments before a call; this makes the same promise when the
 * module runs elsewhere (tests, another host), and names the field that is
 * wrong so the model can fix exactly that.
 *
 * @param {object} schema
 * @param {unknown} value
 * @param {string} [path]
 * @returns {unknown} the value, with defaults filled in
 * @throws {ToolError} invalid-arguments
 */
export function checkArguments(schema, value, path = "") {
  const bad = (why) => invalidArguments(`${at(path)}: ${why}`);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => TYPE_CHECKS[t]?.(value) ?? true)) {
      throw bad(`expected ${types.join(" or ")}, got ${describeValue(value)}`);
    }
  }
  if (schema.enum !== undefined && !schema.enum.some((e) => sameJson(e, value))) {
    throw bad(`expected one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}, got ${JSON.stringify(value)}`);
  }
  if ("const" in schema && !sameJson(schema.const, value)) {
    throw bad(`expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) throw bad(`must be at least ${schema.minimum}, got ${value}`);
    if (schema.maximum !== undefined && value > schema.maximum) throw bad(`must be at most ${schema.maximum}, got ${value}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) throw bad(`must be more than ${schema.exclusiveMinimum}, got ${value}`);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) throw bad(`must be less than ${schema.exclusiveMaximum}, got ${value}`);
  }
  if (typeof value === "string") {
    // JSON Schema counts characters (code points), not UTF-16 units.
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) throw bad(`must be at least ${schema.minLength} characters long`);
    if (schema.maxLength !== undefined && length > schema.maxLength) throw bad(`must be at most ${schema.maxLength} characters long, got ${length}`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) throw bad(`must match the pattern ${schema.pattern}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) throw bad(`must have at least ${schema.minItems} items, got ${value.length}`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) throw bad(`must have at most ${schema.maxItems} items, got ${value.length}`);
    if (isPlainObject(schema.items)) return value.map((item, i) => checkArguments(schema.items, item, `${path}[${i}]`));
  }
  if (isPlainObject(value)) {
    const properties = isPlainObject(schema.properties) ? schema.properties : {};
    for (const key of schema.required ?? []) {
      if (!(key in value)) throw invalidArguments(`${at(join(path, key))}: is required (${describeProperty(properties[key])})`);
    }
    if (schema.additionalProperties === false) {
      const unknown = Object.keys(value).filter((k) => !(k in properties));
      if (unknown.length > 0) {
        const known = Object.keys(properties);
        throw bad(`unknown ${unknown.length === 1 ? "property" : "properties"} ${unknown.map((k) => `\`${k}\``).join(", ")}; this takes only: ${known.length ? known.join(", ") : "no arguments"}`);
      }
    }
    const out = { ...value };
    for (const [key, sub] of Object.entries(properties)) {
      if (key in value) out[key] = checkArguments(sub, value[key], join(path, key));
      else if (isPlainObject(sub) && "default" in sub) out[key] = structuredCopy(sub.default);
    }
    return out;
  }
  return value;
}

/** @param {object|undefined} schema */
function describeProperty(schema) {
  if (!isPlainObject(schema)) return "see the tool's schema";
  const type = Array.isArray(schema.type) ? schema.type.join(" or ") : schema.type ?? "a value";
  return schema.description ? `${type}: ${schema.description}` : type;
}

/** @param {unknown} value */
function describeValue(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (Number.isInteger(value)) return `the integer ${value}`;
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value === "string") return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const structuredCopy = (v) => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

// ---------------------------------------------------------------------------
// The skill: manifest data plus each tool's handler, kept together so a
// tool's schema and its argument decoding cannot drift apart.

const SKILL_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * A handler's value as the text the model receives: a string as it is,
 * anything else as JSON.
 * @param {unknown} value
 * @returns {string}
 */
export function reply(value) {
  if (typeof value === "string") return value;
  let text;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch (err) {
    throw failed(`could not encode the result as JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return text;
}

/**
 * What crosses the component boundary for a thrown value: a ToolError's code
 * and message; anything else becomes `failed` with its message, so a bug in
 * a handler is an error the model reads rather than a trap.
 * @param {unknown} thrown
 * @param {string} tool
 * @returns {{code: string, message: string}}
 */
export function toWireError(thrown, tool) {
  if (thrown instanceof ToolError) return { code: thrown.code, message: thrown.message };
  // A plain `{code, message}` thrown by hand counts as a ToolError.
  if (isPlainObject(thrown) && CODES.includes(thrown.code) && typeof thrown.message === "string") {
    return { code: thrown.code, message: thrown.message };
  }
  const text = thrown instanceof Error ? thrown.message : String(thrown);
  if (text === "out of memory") {
    // SpiderMonkey throws this when the host's memory limit refuses to grow
    // the instance's memory: say which limit, as the host does for a trap.
    return {
      code: ErrorCode.Failed,
      message: `${tool}: ran out of memory (the permission table's memory_mb for this skill); ask for less data in one call, or the operator to raise memory_mb`,
    };
  }
  if (thrown instanceof Error) {
    const kind = thrown.name && thrown.name !== "Error" ? `${thrown.name}: ` : "";
    return { code: ErrorCode.Failed, message: `${tool}: ${kind}${thrown.message}` };
  }
  return { code: ErrorCode.Failed, message: `${tool}: ${text}` };
}

/**
 * A skill being defined: add tools with {@link Skill#tool}, export
 * {@link Skill#guest} as `guest`.
 */
export class Skill {
  /** @param {{name: string, version: string, description: string, instructions?: string}} info */
  constructor(info) {
    const { name, version, description, instructions } = info ?? {};
    if (typeof name !== "string" || !SKILL_NAME.test(name)) {
      throw new TypeError(`defineSkill: name ${JSON.stringify(name)} is invalid: use [a-z][a-z0-9_-]*, at most 64 characters`);
    }
    if (typeof version !== "string" || !SEMVER.test(version)) {
      throw new TypeError(`defineSkill: version ${JSON.stringify(version)} of ${name} is not semver (e.g. 1.2.0)`);
    }
    if (typeof description !== "string" || description.trim() === "") {
      throw new TypeError(`defineSkill: ${name} needs a description: one or two sentences for a model choosing among skills`);
    }
    if (instructions !== undefined && typeof instructions !== "string") {
      throw new TypeError(`defineSkill: the instructions of ${name} are Markdown text`);
    }
    /** @readonly */ this.name = name;
    /** @readonly */ this.version = version;
    /** @readonly */ this.description = description;
    /** @readonly */ this.instructions = instructions;
    /** @type {Map<string, {description: string, schema: object, examples: object[], handler: Function}>} */
    this.tools = new Map();
    /**
     * The `guest` interface of the WIT contract: export it with
     * `export const guest = skill.guest;`.
     */
    this.guest = Object.freeze({
      describe: () => this.manifest(),
      call: (tool, argumentsJson) => this.call(tool, argumentsJson),
    });
  }

  /**
   * Add a tool. Arguments are decoded from JSON, checked against the schema
   * derived from `parameters` and given their defaults before `handler`
   * runs; the handler may be async. It returns the result (a string as it
   * is, anything else as JSON) or throws a {@link ToolError}; any other
   * thrown error becomes `failed` with its message.
   *
   * @param {string} name `[a-z][a-z0-9_]*`
   * @param {{description: string, parameters?: Record<string, Schema|object>|Schema,
   *          examples?: {description: string, arguments: object, output?: unknown}[]}} spec
   * @param {(args: any) => unknown} handler
   * @returns {this}
   */
  tool(name, spec, handler) {
    const where = `${this.name}.${name}`;
    if (typeof name !== "string" || !TOOL_NAME.test(name)) {
      throw new TypeError(`tool name ${JSON.stringify(where)} is invalid: use [a-z][a-z0-9_]*, at most 64 characters`);
    }
    if (this.tools.has(name)) throw new TypeError(`tool ${where} is defined twice`);
    if (!isPlainObject(spec) || typeof spec.description !== "string" || spec.description.trim() === "") {
      throw new TypeError(`tool ${where} needs a description: what it does, when to use it and when not, written for a model`);
    }
    if (typeof handler !== "function") throw new TypeError(`tool ${where} needs a handler function`);
    const schema = parametersSchema(spec.parameters, `${where} parameters`);
    const examples = (spec.examples ?? []).map((example, i) => {
      if (!isPlainObject(example) || typeof example.description !== "string" || !isPlainObject(example.arguments)) {
        throw new TypeError(`${where}: example ${i + 1} needs a description and an arguments object`);
      }
      // The host refuses a skill whose example does not fit its schema: fail
      // here, when the skill is built, with the field that is wrong.
      try {
        checkArguments(schema, example.arguments);
      } catch (err) {
        throw new TypeError(`${where}: example ${JSON.stringify(example.description)} does not match the schema: ${err.message}`);
      }
      return {
        description: example.description,
        arguments: JSON.stringify(example.arguments),
        output: example.output === undefined ? undefined : reply(example.output),
      };
    });
    this.tools.set(name, { description: spec.description, schema, examples, handler });
    return this;
  }

  /**
   * The manifest `describe` returns, in the contract's shape.
   * @returns {{name: string, version: string, description: string, tools: object[], instructions?: string}}
   */
  manifest() {
    return {
      name: this.name,
      version: this.version,
      description: this.description,
      tools: [...this.tools].map(([name, t]) => ({
        name,
        description: t.description,
        parameters: JSON.stringify(t.schema),
        examples: t.examples,
      })),
      instructions: this.instructions,
    };
  }

  /**
   * Run one tool, as the contract's `call`: never throws; the outcome is a
   * `result` the way componentize-js expects one (`{tag: "ok", val}` or
   * `{tag: "err", val: {code, message}}`).
   * @param {string} tool
   * @param {string} argumentsJson
   * @returns {Promise<{tag: "ok", val: string} | {tag: "err", val: {code: string, message: string}}>}
   */
  async call(tool, argumentsJson) {
    try {
      const entry = this.tools.get(tool);
      if (entry === undefined) {
        throw notFound(`no tool named \`${tool}\`; this skill has: ${[...this.tools.keys()].join(", ")}`);
      }
      let args;
      try {
        args = JSON.parse(argumentsJson);
      } catch (err) {
        throw invalidArguments(`${tool}: the arguments are not JSON: ${err.message}`);
      }
      try {
        args = checkArguments(entry.schema, args);
      } catch (err) {
        if (err instanceof ToolError) throw invalidArguments(`${tool}: invalid arguments: ${err.message}`);
        throw err;
      }
      return { tag: "ok", val: reply(await entry.handler(args)) };
    } catch (thrown) {
      // Returned, not thrown: componentize-js turns a thrown Error without a
      // `payload` into a trap, which the model would see as a crash.
      return { tag: "err", val: toWireError(thrown, tool) };
    }
  }
}

/**
 * Start a skill. `name` is `[a-z][a-z0-9_-]*` and must match the component's
 * file name (`NAME.wasm`); `version` is semver; `description` is one or two
 * sentences for a model choosing among skills; `instructions` is optional
 * Markdown shown when a model asks for this skill.
 *
 * The definition runs once, when the component is built (componentize-js
 * snapshots the module after its top level ran); every call then starts from
 * that snapshot in a fresh instance, so nothing a handler stores survives to
 * the next call.
 *
 * @param {{name: string, version: string, description: string, instructions?: string}} info
 * @returns {Skill}
 */
export function defineSkill(info) {
  return new Skill(info);
}
