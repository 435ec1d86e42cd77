// The worker of the GMM and Federated pages: the full privmix build (GMM release and
// federated bindings included), inlined like the main page's so that no fetch is needed.
import init, * as privmix from "./vendor/full/privmix.js";
import { wasmGzipBase64 } from "./vendor/full/privmix-wasm.js";
import { inflateBase64Gzip, serve } from "./vendor/worker-core.mjs";

serve(async () => {
  await init({ module_or_path: await inflateBase64Gzip(wasmGzipBase64) });
  return privmix;
});
