// The app's worker: the privmix wasm is inlined (gzip + base64) so that the page needs no
// fetch at all, not even for its own wasm (CSP connect-src 'none').
import init, * as privmix from "./vendor/privmix.js";
import { wasmGzipBase64 } from "./vendor/privmix-wasm.js";
import { serve } from "./vendor/worker-core.mjs";

serve(async () => {
  const bin = atob(wasmGzipBase64);
  const gz = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) gz[i] = bin.charCodeAt(i);
  const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  await init({ module_or_path: bytes });
  return privmix;
});
