// The SDK under plain Node.js: schemas derived from declared parameters,
// argument checks, and every way a handler can end mapped to the contract.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ToolError,
  checkArguments,
  defineSkill,
  denied,
  failed,
  invalidArguments,
  notFound,
  optional,
  parametersSchema,
  s,
} from "../agent-reach.js";

const hello = () => defineSkill({ name: "hello", version: "0.1.0", description: "Greets people." });

describe("schemas from declared parameters", () => {
  it("makes every property required unless optional or defaulted, and forbids others", () => {
    const schema = parametersSchema({
      url: s.string({ description: "The URL." }),
      limit: s.integer({ minimum: 1, maximum: 100, default: 10 }),
      tag: s.string().optional(),
      mode: optional(s.enum(["a", "b"])),
    });
    assert.deepEqual(schema, {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        url: { type: "string", description: "The URL." },
        limit: { type: "integer", minimum: 1, maximum: 100, default: 10 },
        tag: { type: "string" },
        mode: { type: "string", enum: ["a", "b"] },
      },
      additionalProperties: false,
      required: ["url"],
    });
  });

  it("takes plain JSON Schema properties as they are", () => {
    const schema = parametersSchema({ path: { type: "string", description: "A path." }, depth: optional({ type: "integer" }) });
    assert.deepEqual(schema.properties, { path: { type: "string", description: "A path." }, depth: { type: "integer" } });
    assert.deepEqual(schema.required, ["path"]);
  });

  it("nests objects and arrays with their own required lists", () => {
    const schema = parametersSchema({
      items: s.array(s.object({ name: s.string(), note: s.string().optional() }), { minItems: 1 }),
    });
    assert.deepEqual(schema.properties.items, {
      type: "array",
      items: { type: "object", properties: { name: { type: "string" }, note: { type: "string" } }, additionalProperties: false, required: ["name"] },
      minItems: 1,
    });
  });

  it("gives a tool without parameters an empty object schema", () => {
    const schema = parametersSchema(undefined);
    assert.deepEqual(schema.properties, {});
    assert.equal(schema.additionalProperties, false);
    assert.equal("required" in schema, false);
  });

  it("refuses parameters that are not an object", () => {
    assert.throws(() => parametersSchema(s.string()), /arguments are an object/);
    assert.throws(() => parametersSchema({ x: 3 }), /expected a schema/);
  });
});

describe("argument checks", () => {
  const schema = parametersSchema({
    urls: s.array(s.string({ minLength: 3 }), { maxItems: 2 }),
    limit: s.integer({ minimum: 1, maximum: 50, default: 10 }),
    filter: s.object({ since: s.string() }).optional(),
  });
  const error = (args) => {
    try {
      checkArguments(schema, args);
    } catch (err) {
      assert.ok(err instanceof ToolError);
      assert.equal(err.code, "invalid-arguments");
      return err.message;
    }
    assert.fail("no error");
  };

  it("fills in defaults and keeps what was given", () => {
    assert.deepEqual(checkArguments(schema, { urls: ["abc"] }), { urls: ["abc"], limit: 10 });
    assert.deepEqual(checkArguments(schema, { urls: ["abc"], limit: 3 }), { urls: ["abc"], limit: 3 });
  });

  it("names the field that is wrong", () => {
    assert.match(error({}), /`urls`: is required \(array\)/);
    assert.match(error({ urls: "abc" }), /`urls`: expected array, got the string "abc"/);
    assert.match(error({ urls: ["abc", "x"] }), /`urls\[1\]`: must be at least 3 characters long/);
    assert.match(error({ urls: ["abc", "abd", "abe"] }), /`urls`: must have at most 2 items/);
    assert.match(error({ urls: ["abc"], limit: 51 }), /`limit`: must be at most 50, got 51/);
    assert.match(error({ urls: ["abc"], limit: 2.5 }), /`limit`: expected integer, got the number 2.5/);
    assert.match(error({ urls: ["abc"], filter: {} }), /`filter.since`: is required/);
    assert.match(error({ urls: ["abc"], lmit: 3 }), /unknown property `lmit`; this takes only: urls, limit, filter/);
    assert.match(error([]), /the arguments: expected object, got an array/);
  });
});

describe("a skill's manifest", () => {
  it("is in the contract's shape, with JSON text for schemas and example arguments", () => {
    const skill = hello().tool(
      "greet",
      {
        description: "Say hello.",
        parameters: { name: s.string() },
        examples: [{ description: "Greet Ada.", arguments: { name: "Ada" }, output: "Hello, Ada!" }],
      },
      ({ name }) => `Hello, ${name}!`,
    );
    const manifest = skill.guest.describe();
    assert.equal(manifest.name, "hello");
    assert.equal(manifest.instructions, undefined);
    assert.equal(manifest.tools.length, 1);
    const [tool] = manifest.tools;
    assert.equal(JSON.parse(tool.parameters).required[0], "name");
    assert.deepEqual(tool.examples, [{ description: "Greet Ada.", arguments: '{"name":"Ada"}', output: "Hello, Ada!" }]);
  });

  it("is checked when the skill is defined, so a mistake fails the build", () => {
    assert.throws(() => defineSkill({ name: "Hello", version: "0.1.0", description: "d" }), /name "Hello" is invalid/);
    assert.throws(() => defineSkill({ name: "hello", version: "1.0", description: "d" }), /not semver/);
    assert.throws(() => defineSkill({ name: "hello", version: "1.0.0", description: " " }), /needs a description/);
    const skill = hello().tool("greet", { description: "d" }, () => "");
    assert.throws(() => skill.tool("greet", { description: "d" }, () => ""), /defined twice/);
    assert.throws(() => skill.tool("Greet2", { description: "d" }, () => ""), /is invalid/);
    assert.throws(() => skill.tool("other", { description: "d" }), /needs a handler/);
    assert.throws(
      () => skill.tool("bad", { description: "d", parameters: { n: s.integer() }, examples: [{ description: "e", arguments: { n: "x" } }] }, () => ""),
      /example "e" does not match the schema: `n`: expected integer/,
    );
  });
});

describe("calls", () => {
  const skill = hello()
    .tool("greet", { description: "d", parameters: { name: s.string() } }, ({ name }) => `Hello, ${name}!`)
    .tool("data", { description: "d", parameters: { n: s.integer({ default: 2 }) } }, async ({ n }) => ({ n, list: [1, 2] }))
    .tool("nothing", { description: "d" }, () => undefined)
    .tool("big", { description: "d" }, () => 10n)
    .tool("throws", { description: "d", parameters: { what: s.string() } }, ({ what }) => {
      if (what === "not-found") throw notFound("no such feed");
      if (what === "denied") throw denied("not granted");
      if (what === "invalid") throw invalidArguments("bad date");
      if (what === "failed") throw failed("server down");
      if (what === "type") null.x;
      if (what === "error") throw new Error("plain error");
      if (what === "string") throw "a string";
      if (what === "oom") throw "out of memory";
      if (what === "object") throw { code: "not-found", message: "by hand" };
      if (what === "reject") return Promise.reject(new RangeError("async"));
      return "none";
    });
  const call = (tool, args) => skill.guest.call(tool, JSON.stringify(args));

  it("returns a string as it is and anything else as JSON", async () => {
    assert.deepEqual(await call("greet", { name: "Ada" }), { tag: "ok", val: "Hello, Ada!" });
    assert.deepEqual(await call("data", {}), { tag: "ok", val: '{"n":2,"list":[1,2]}' });
    assert.deepEqual(await call("nothing", {}), { tag: "ok", val: "null" });
  });

  it("maps ToolErrors to the contract's codes", async () => {
    for (const [what, code, message] of [
      ["not-found", "not-found", "no such feed"],
      ["denied", "denied", "not granted"],
      ["invalid", "invalid-arguments", "bad date"],
      ["failed", "failed", "server down"],
      ["object", "not-found", "by hand"],
    ]) {
      assert.deepEqual(await call("throws", { what }), { tag: "err", val: { code, message } }, what);
    }
  });

  it("turns any other thrown value into failed with its message, never a trap", async () => {
    const message = async (what) => (await call("throws", { what })).val;
    assert.deepEqual(await message("error"), { code: "failed", message: "throws: plain error" });
    assert.match((await message("type")).message, /^throws: TypeError: /);
    assert.deepEqual(await message("string"), { code: "failed", message: "throws: a string" });
    assert.match((await message("oom")).message, /^throws: ran out of memory \(the permission table's memory_mb/);
    assert.deepEqual(await message("reject"), { code: "failed", message: "throws: RangeError: async" });
    assert.match((await call("big", {})).val.message, /could not encode the result as JSON/);
  });

  it("answers an unknown tool with the tools it has", async () => {
    assert.deepEqual(await call("greed", {}), {
      tag: "err",
      val: { code: "not-found", message: "no tool named `greed`; this skill has: greet, data, nothing, big, throws" },
    });
  });

  it("refuses arguments that are not JSON or do not fit", async () => {
    assert.equal((await skill.guest.call("greet", "{name")).val.code, "invalid-arguments");
    assert.deepEqual(await call("greet", {}), {
      tag: "err",
      val: { code: "invalid-arguments", message: "greet: invalid arguments: `name`: is required (string)" },
    });
  });

  it("refuses an error code the contract does not have where it is written", () => {
    assert.throws(() => new ToolError("timeout", "x"), /unknown code "timeout"/);
  });
});
