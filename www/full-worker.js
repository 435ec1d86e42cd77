// The worker of the GMM and Federated pages: the full privmix build (GMM release and
// federated bindings included), inlined like the main page's so that no fetch is needed.
import init, * as privmix from "./vendor/full/privmix.js";
import { wasmGzipBase64 } from "./vendor/full/privmix-wasm.js";
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
