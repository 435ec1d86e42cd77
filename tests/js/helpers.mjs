// Shared helpers for the Node and browser tests.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";

export const ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));

/** The native CLI (built by `cargo build --release` in scripts/test-all.sh). */
export function cli() {
  const bin = resolve(process.env.CARGO_TARGET_DIR ? resolve(ROOT, process.env.CARGO_TARGET_DIR) : resolve(ROOT, "target"), "release/privmix");
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run cargo build --release first`);
  return bin;
}

export function runCli(args) {
  return JSON.parse(execFileSync(cli(), [...args, "--json"], { encoding: "utf8" }));
}

/** A messy CSV: quoted fields with commas, CRLF, a BOM, missing values, a categorical column. */
export function messyCsv(rows = 240) {
  const lines = ['\ufeff"age","income, yearly",city,score,outcome'];
  const cities = ["Oslo", "Bergen", '"Tromsø, N"', "Stavanger"];
  let s = 12345;
  const r = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let i = 0; i < rows; i++) {
    const cls = i % 3;
    const age = 20 + Math.floor(r() * 50) + cls * 5;
    const income = (30000 + r() * 40000 + cls * 10000).toFixed(2);
    const city = cities[Math.floor(r() * cities.length)];
    const score = i % 37 === 5 ? "NA" : (r() * 10 + cls).toFixed(3);
    lines.push(`${age},"${income}",${city},${score},${["no", "yes", "maybe"][cls]}`);
  }
  return lines.join("\r\n") + "\r\n";
}

/** Parses a simple CSV produced by privmix (RFC 4180 quoting). */
export function parseCsv(text) {
  const rows = [];
  let row = [];
  let cell = "";
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else q = false;
      } else cell += c;
    } else if (c === '"') q = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\n") {
      row.push(cell.replace(/\r$/, ""));
      rows.push(row);
      row = [];
      cell = "";
    } else cell += c;
  }
  if (cell !== "" || row.length) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}
