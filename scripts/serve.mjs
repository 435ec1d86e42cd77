// Serves the browser app (www/) on http://127.0.0.1:$PORT/ (default 8080) with a
// Content-Security-Policy that forbids every network connection. Static files only.
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("../www/", import.meta.url)));
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? "127.0.0.1";

// The same policy as the <meta> tag in www/index.html, plus the header-only directives.
export const CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f5fa8"/>' +
  '<path d="M4 12V4h4a2.5 2.5 0 0 1 0 5H4" stroke="white" stroke-width="2" fill="none"/></svg>';

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

const server = createServer(async (req, res) => {
  const headers = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
  };
  try {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, headers).end();
      return;
    }
    const url = new URL(req.url, "http://localhost");
    // Pages carry an inline icon; this answers browsers that ask for /favicon.ico anyway.
    if (url.pathname === "/favicon.ico") {
      res.writeHead(200, { ...headers, "Content-Type": "image/svg+xml" }).end(req.method === "HEAD" ? undefined : FAVICON);
      return;
    }
    let path = normalize(join(root, decodeURIComponent(url.pathname)));
    if (path !== root && !path.startsWith(root + sep)) {
      res.writeHead(403, headers).end();
      return;
    }
    if ((await stat(path).catch(() => null))?.isDirectory()) path = join(path, "index.html");
    let body = await readFile(path);
    const type = TYPES[extname(path)] ?? "application/octet-stream";
    const extra = { "Content-Type": type, Vary: "Accept-Encoding" };
    // Compress text and wasm for browsers that accept it (the app's size goal is gzipped).
    if (/gzip/.test(req.headers["accept-encoding"] ?? "") && !type.startsWith("image/")) {
      body = gzipSync(body, { level: 9 });
      extra["Content-Encoding"] = "gzip";
    }
    res.writeHead(200, { ...headers, ...extra });
    res.end(req.method === "HEAD" ? undefined : body);
  } catch {
    res.writeHead(404, { ...headers, "Content-Type": "text/plain" }).end("not found");
  }
});

server.listen(port, host, () => {
  console.log(`privmix: the app is at http://${host}:${port}/ (Ctrl-C to stop)`);
  console.log("privmix: your data stays in the browser tab; the page may not open any connection.");
});
