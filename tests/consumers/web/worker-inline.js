// A worker for bundles without asset support: the inline build behind the worker protocol.
import init, * as privmix from "privmix/inline";
import { serve } from "privmix/worker-core.mjs";

serve(async () => {
  await init();
  return privmix;
});
