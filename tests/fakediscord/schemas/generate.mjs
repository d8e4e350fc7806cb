// Writes discord.schema.json: JSON Schemas (draft-07) of what the tests' fake Discord
// (../server.py) sends, generated from Discord's typings (discord-api-types) by
// ts-json-schema-generator, at the exact versions of package.json / package-lock.json.
//
//   cd tests/fakediscord/schemas && npm ci && node generate.mjs
//
// (ts-json-schema-generator 2.10.0 says it wants node 22, and npm warns on node 20, where it runs
// and writes the same file; 2.4.0, the last that says node 18, fails on discord-api-types: the
// message snapshots' `Pick<APIMessage, ...>` inside APIMessage itself.)
//
// To bump discord-api-types: `npm install --save-exact discord-api-types@<version>`, run this,
// then the tests: a failure names the field the fake sends that the new typings refuse.
//
// Objects refuse any property the typings do not name (additionalProperties: false), so a
// field Discord never sends fails the check in ../payload_check.py. Two rules turn TypeScript
// into JSON, and both are applied here, not in the check:
//  - a numeric enum named `...Flags` is a bitfield: any combination of its bits (0 too) is
//    valid, none other (`x-known-bits`, which payload_check.py enforces);
//  - a property typed `undefined` (a heartbeat ACK's `d`) is `null` or absent on the wire.
import { createGenerator } from "ts-json-schema-generator";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const typings = join(here, "node_modules", "discord-api-types");

// Every type the fake sends, by the typings module that declares it. payload_check.py maps
// gateway events and REST routes to these names.
const ROOTS = {
  "v10.d.ts": [
    // the gateway, whole payloads (op, t, s, d)
    "GatewayHello",
    "GatewayHeartbeatAck",
    "GatewayInvalidSession",
    "GatewayReadyDispatch",
    "GatewayResumedDispatch",
    "GatewayGuildCreateDispatch",
    "GatewayGuildDeleteDispatch",
    "GatewayGuildRoleCreateDispatch",
    "GatewayChannelCreateDispatch",
    "GatewayChannelDeleteDispatch",
    "GatewayThreadCreateDispatch",
    "GatewayMessageCreateDispatch",
    "GatewayMessageUpdateDispatch",
    "GatewayMessageDeleteDispatch",
    "GatewayVoiceStateUpdateDispatch",
    "GatewayVoiceServerUpdateDispatch",
    "GatewayInteractionCreateDispatch",
    // REST, the JSON bodies of the responses
    "RESTGetAPICurrentUserResult",
    "RESTGetAPIGatewayBotResult",
    "RESTGetAPIOAuth2CurrentApplicationResult",
    "RESTGetAPICurrentUserGuildsResult",
    "RESTGetAPIGuildResult",
    "RESTGetAPIGuildChannelsResult",
    "RESTGetAPIGuildMemberResult",
    "RESTGetAPIApplicationCommandsResult",
    "RESTPutAPIApplicationCommandsResult",
    "RESTGetAPIApplicationGuildCommandsResult",
    "RESTPutAPIApplicationGuildCommandsResult",
    "RESTPostAPIChannelMessageResult",
    "RESTPostAPIInteractionCallbackWithResponseResult",
    "RESTGetAPIWebhookWithTokenMessageResult",
    "RESTPatchAPIWebhookWithTokenMessageResult",
    "RESTPostAPIWebhookWithTokenWaitResult",
    "RESTError",
    // parts the check names itself (RESTGetAPIGuildChannelsResult is the bare base channel)
    "APIChannel",
    "APIMessage",
  ],
  // the voice websocket, version 8
  "voice/v8.d.ts": [
    "VoiceHello",
    "VoiceReady",
    "VoiceSessionDescription",
    "VoiceHeartbeatAck",
    "VoiceResumed",
    // DAVE's JSON ops the voice gateway sends (its binary ones have no JSON to check)
    "VoiceDavePrepareTransition",
    "VoiceDaveExecuteTransition",
    "VoiceDavePrepareEpoch",
  ],
};

const definitions = {};
for (const [file, names] of Object.entries(ROOTS)) {
  const generator = createGenerator({
    path: join(typings, file),
    additionalProperties: false,
    expose: "export",
    jsDoc: "none", // descriptions would triple the file; the typings are the documentation
    topRef: true,
    skipTypeCheck: true,
  });
  for (const name of names) {
    const schema = generator.createSchema(name);
    for (const [key, value] of Object.entries(schema.definitions)) {
      if (key in definitions && !isDeepStrictEqual(definitions[key], value)) {
        throw new Error(`two different definitions of ${key} (the last for ${name})`);
      }
      definitions[key] = value;
    }
  }
}

// A root that only points at a generic instance (`_DataPayload<enum-…,GatewayReadyDispatchData>`)
// takes its body, so that each payload reads under its own name.
const refersTo = (schema) => decodeURIComponent(schema.$ref.replace("#/definitions/", ""));
const references = JSON.stringify(definitions).match(/"\$ref":"[^"]+"/g) ?? [];
const count = {};
for (const ref of references) {
  const name = decodeURIComponent(ref.slice(8, -1).replace("#/definitions/", ""));
  count[name] = (count[name] ?? 0) + 1;
}
for (const names of Object.values(ROOTS)) {
  for (const name of names) {
    const root = definitions[name];
    if (Object.keys(root).length === 1 && root.$ref && count[refersTo(root)] === 1) {
      const target = refersTo(root);
      if (/[<>]/.test(target)) {
        definitions[name] = definitions[target];
        delete definitions[target];
      }
    }
  }
}

const FLAGS = /Flags$/;
for (const [name, schema] of Object.entries(definitions)) {
  if (FLAGS.test(name) && (Array.isArray(schema.enum) || typeof schema.const === "number")) {
    const bits = schema.enum ?? [schema.const]; // an enum of one member is a const
    // a power of two each (some beyond 32 bits, where JavaScript's `&` stops)
    if (!bits.every((bit) => Number.isSafeInteger(bit) && bit > 0 && Number.isInteger(Math.log2(bit)))) {
      throw new Error(`${name} is not a bitfield: ${bits}`);
    }
    definitions[name] = { type: "integer", minimum: 0, "x-known-bits": [...bits].sort((a, b) => a - b) };
  }
}
const nullForUndefined = (node) => {
  if (Array.isArray(node)) return node.forEach(nullForUndefined);
  if (node === null || typeof node !== "object") return;
  if (node.properties) {
    for (const [key, value] of Object.entries(node.properties)) {
      if (isDeepStrictEqual(value, { not: {} })) node.properties[key] = { type: "null" };
    }
  }
  Object.values(node).forEach(nullForUndefined);
};
nullForUndefined(definitions);

const version = (pkg) =>
  JSON.parse(readFileSync(join(here, "node_modules", pkg, "package.json"), "utf8")).version;
const header = {
  $schema: "http://json-schema.org/draft-07/schema#",
  $comment: `Generated by generate.mjs from discord-api-types ${version("discord-api-types")} with ts-json-schema-generator ${version("ts-json-schema-generator")}; do not edit.`,
};
// One definition a line: small, and a regeneration's diff shows which payloads changed.
const lines = Object.keys(definitions)
  .sort()
  .map((key) => `  ${JSON.stringify(key)}: ${JSON.stringify(definitions[key])}`);
const head = Object.entries(header).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`);
writeFileSync(
  join(here, "discord.schema.json"),
  `{\n${head.map((line) => `  ${line},\n`).join("")}  "definitions": {\n  ${lines.join(",\n  ")}\n  }\n}\n`,
);
console.log(`discord.schema.json: ${lines.length} definitions`);
