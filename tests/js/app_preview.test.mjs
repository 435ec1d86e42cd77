// The app's preview takes the head of the synthetic CSV (www/app.js `headLines`): whole lines,
// the header and at least one row, no more than the byte budget after that. The page script
// is not a module, so the function is read from its source.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers.mjs";

const src = readFileSync(join(ROOT, "www/app.js"), "utf8");
const start = src.indexOf("function headLines(");
const end = src.indexOf("\n}\n", start) + 3;
assert.ok(start >= 0 && end > start, "www/app.js defines headLines");
const headLines = new Function(`${src.slice(start, end)}; return headLines;`)();
const enc = (s) => new TextEncoder().encode(s);
const head = (s, n, max) => new TextDecoder().decode(headLines(enc(s), n, max));

test("the preview head is the header and n rows, as whole lines", () => {
  assert.equal(head("h\na\nb\nc\n", 2, 100), "h\na\nb\n");
  assert.equal(head("h\na\nb\nc", 3, 100), "h\na\nb\nc", "a last line without a newline is kept");
  assert.equal(head("h\na\nb", 1, 100), "h\na\n");
  assert.equal(head("", 5, 10), "");
});

test("the byte budget cuts at a line end but keeps the header and one row", () => {
  assert.equal(head("hhhh\naaaa\nbbbb\n", 5, 3), "hhhh\naaaa\n");
  assert.equal(head("hhhh\naaaa\nbbbb", 5, 3), "hhhh\naaaa\n");
  assert.equal(head("hhhh", 5, 2), "hhhh");
  assert.equal(head("hh\naa", 5, 2), "hh\naa");
  assert.equal(head("h\na\nb\nc\n", 9, 6), "h\na\nb\n", "stops before the line that crosses the budget");
});

test("the head is a view, not a copy", () => {
  const bytes = enc("h\na\nb\n");
  assert.equal(headLines(bytes, 1, 100).buffer, bytes.buffer);
});
