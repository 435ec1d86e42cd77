// `npm pack` once per test process, and consumer projects with the tarball unpacked into
// node_modules/privmix (no registry, no `npm install`); tools come from the repository's
// devDependencies.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../js/helpers.mjs";

let packed = null;
export function pack() {
  if (packed) return packed;
  const out = mkdtempSync(join(tmpdir(), "privmix-pack-"));
  const json = execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const info = JSON.parse(json.slice(json.indexOf("[")))[0];
  packed = { tarball: join(out, info.filename), files: info.files.map((f) => f.path), info };
  return packed;
}

/**
 * A copy of tests/consumers/<name> with the packed privmix in node_modules. `inside`: under
 * the repository's target/ (frameworks such as Next.js then find their packages, and their
 * project root, through the repository's node_modules and lockfile).
 */
export function consumer(name, { inside = false } = {}) {
  const { tarball } = pack();
  let dir;
  if (inside) {
    mkdirSync(join(ROOT, "target/consumers"), { recursive: true });
    dir = mkdtempSync(join(ROOT, "target/consumers", `${name}-`));
  } else {
    dir = mkdtempSync(join(tmpdir(), `privmix-${name}-`));
  }
  cpSync(join(ROOT, "tests/consumers", name), dir, { recursive: true });
  const pkg = join(dir, "node_modules/privmix");
  mkdirSync(pkg, { recursive: true });
  execFileSync("tar", ["-xzf", tarball, "-C", pkg, "--strip-components=1"]);
  if (!inside) symlinkSync(join(ROOT, "node_modules/@types"), join(dir, "node_modules/@types"), "dir");
  return dir;
}

export const tool = (rel) => join(ROOT, "node_modules", rel);
