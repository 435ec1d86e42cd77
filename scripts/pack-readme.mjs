// npm prepack/postpack: the tarball's README.md is README.npm.md (the package's own README:
// install, init, bundlers, CSP, options); the repository's README.md is put back after packing.
import { copyFileSync, existsSync, renameSync } from "node:fs";

const phase = process.argv[2];
if (phase === "pre") {
  if (!existsSync("README.repo.md")) renameSync("README.md", "README.repo.md");
  copyFileSync("README.npm.md", "README.md");
} else if (phase === "post") {
  if (existsSync("README.repo.md")) renameSync("README.repo.md", "README.md");
} else {
  throw new Error("usage: pack-readme.mjs pre|post");
}
