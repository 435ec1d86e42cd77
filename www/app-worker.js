// The app's worker: the privmix wasm is inlined (gzip + base64) so that the page needs no
// fetch at all, not even for its own wasm (CSP connect-src 'none').
import init, * as privmix from "./vendor/privmix.js";
import { wasmGzipBase64 } from "./vendor/privmix-wasm.js";
import { inflateBase64Gzip, serve } from "./vendor/worker-core.mjs";

serve(async () => {
  await init({ module_or_path: await inflateBase64Gzip(wasmGzipBase64) });
  return privmix;
});
