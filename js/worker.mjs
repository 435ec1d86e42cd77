// The default privmix worker script (module worker): the full build, its wasm loaded from
// next to the glue (bundlers emit it as an asset).
import init, * as privmix from "../pkg/full/privmix.js";
import { serve } from "./worker-core.mjs";

serve(async () => {
  await init();
  return privmix;
});
