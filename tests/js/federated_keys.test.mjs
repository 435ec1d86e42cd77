// The Federated page's key state (www/federated-keys.js): after "Make my contribution" the
// page holds only the updated key, never re-reads the original key file, and refuses a repeated
// context (issue 11, item 5). The engine is modelled by its contract: contribute refuses a key
// whose used_contexts hold the run's context, and returns the key with the context appended.
import test from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./helpers.mjs";

const { KeyHolder } = await import(pathToFileURL(join(ROOT, "www/federated-keys.js")).href);

const original = JSON.stringify({
  format: "privmix-federated-secret-key-v1",
  party: 1,
  x25519_secret: "c2VjcmV0",
  x25519: "cHVibGlj",
  used_contexts: [],
});

// The engine's contract (src/pipelines/federated/contribute.rs `contribute` + api::federated::federated_contribute).
function engineContribute(keyText, options) {
  const key = JSON.parse(keyText);
  const context = `ctx-${options.session ?? ""}`;
  if (key.used_contexts.includes(context)) throw new Error("this key already contributed to a run with exactly these parameters");
  const updated = { ...key, used_contexts: [...key.used_contexts, context] };
  return { contribution: JSON.stringify({ party: key.party, context }), secretKey: JSON.stringify(updated) };
}

// The page's contribute step: the key comes from the holder only.
function pageContribute(keys, options) {
  const r = engineContribute(keys.current(), options);
  keys.afterContribute(r.contribution, r.secretKey);
  return r;
}

test("after a contribution the page holds the updated key and refuses the same run again", () => {
  const keys = new KeyHolder();
  assert.throws(() => keys.current(), /make a key pair/);
  keys.load(original, "file");
  const r = pageContribute(keys, {});
  assert.equal(keys.current(), r.secretKey);
  assert.notEqual(keys.current(), original);
  assert.deepEqual(JSON.parse(keys.current()).used_contexts, ["ctx-"]);
  // A second "Make my contribution" with the same parameters: refused, nothing replaced.
  assert.throws(() => pageContribute(keys, {}), /already contributed/);
  assert.equal(keys.current(), r.secretKey);
  // A new session is a new context.
  pageContribute(keys, { session: "second" });
  assert.deepEqual(JSON.parse(keys.current()).used_contexts, ["ctx-", "ctx-second"]);
});

test("the original key file loaded again after a contribution is refused as stale", () => {
  const keys = new KeyHolder();
  keys.load(original, "file");
  const r = pageContribute(keys, {});
  assert.throws(() => keys.load(original, "file"), /older copy/);
  assert.equal(keys.current(), r.secretKey);
  // The updated key itself may be loaded again.
  keys.load(r.secretKey, "file");
  assert.throws(() => pageContribute(keys, {}), /already contributed/);
});

test("a repeated context is refused even if an engine returned a contribution for it", () => {
  const keys = new KeyHolder();
  keys.load(original, "file");
  const first = engineContribute(keys.current(), {});
  keys.afterContribute(first.contribution, first.secretKey);
  // An engine that ignored used_contexts (e.g. given the original key) would return the same
  // context again: the holder refuses to keep it.
  const again = engineContribute(original, {});
  assert.throws(() => keys.afterContribute(again.contribution, again.secretKey), /already contributed|not the key/);
  assert.equal(keys.current(), first.secretKey);
  // An updated key that does not record the run is not kept.
  const k2 = new KeyHolder();
  k2.load(original);
  assert.throws(() => k2.afterContribute(JSON.stringify({ party: 1, context: "x" }), original), /does not record/);
  assert.equal(k2.current(), original);
  assert.throws(() => k2.load("{}"), /not a privmix private key/);
  // With no key held, the contribution says why the loaded file was not used (it said only
  // "make a key pair above" while the status line had moved on to the data file).
  const k3 = new KeyHolder();
  assert.throws(() => k3.load('{"not":"a key"}'), /not a privmix private key/);
  assert.throws(() => k3.current(), /the key file you loaded cannot be used \(this is not a privmix private key file.*\); make a key pair above/);
  k3.load(original);
  assert.equal(k3.current(), original);
});

test("the page never reads the key file input at contribution time", async () => {
  const { readFileSync } = await import("node:fs");
  const page = readFileSync(join(ROOT, "www/federated.js"), "utf8");
  const body = page.slice(page.indexOf("async function contribute"), page.indexOf("async function aggregate"));
  assert.ok(body.includes("keys.current()"), "contribute takes the key from the holder");
  assert.ok(!body.includes('$("key-input")'), "contribute must not re-read the key file");
  assert.ok(body.includes("keys.afterContribute("), "contribute records the updated key");
});
