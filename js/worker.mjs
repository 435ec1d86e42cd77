// The default privmix worker script (module worker): loads the wasm next to the glue.
import init, * as privmix from "../pkg/web/privmix.js";
import { serve } from "./worker-core.mjs";

serve(async () => {
  await init();
  return privmix;
});
