// The Federated page: make a key pair, contribute from my own data with the other parties'
// public keys, and aggregate everyone's contribution files. Nothing is sent anywhere: the
// files are downloaded and exchanged by the parties themselves.
import { $, download, fillLabels, friendly, fullWorker, num, setStatus } from "./common.js";
import { KeyHolder } from "./federated-keys.js";

const pm = fullWorker();
// The private key lives only in `keys`: read once, replaced by the updated key after each
// contribution (a key reused for the same run would repeat its correlated noise).
const keys = new KeyHolder();
const state = { secretKey: null, publicKey: null, party: null, contribution: null, updatedKey: null, result: null, source: null, schema: null };
// The latest key and data-file loads (their change handlers read the files asynchronously):
// a contribution waits for both, so a click right after choosing a file never uses the
// previous party's key or data.
const loading = { key: Promise.resolve(), source: Promise.resolve(), schema: Promise.resolve() };

async function keygen() {
  try {
    const party = num("party-input", "party", { integer: true });
    const k = await pm.federatedKeygen(party);
    keys.load(k.secretKey, "keygen");
    Object.assign(state, { secretKey: k.secretKey, publicKey: k.publicKey, party });
    $("download-key").disabled = false;
    $("download-pub").disabled = false;
    setStatus("done", `Party ${party}: key pair made. Download both; keep the private key, send the public key to the other parties.`);
  } catch (e) {
    setStatus("error", friendly(e, "Could not make a key"));
  }
}

async function contribute() {
  try {
    await Promise.all([loading.key, loading.source, loading.schema]);
    const secretKey = keys.current();
    const peers = await Promise.all([...$("peers-input").files].map((f) => f.text()));
    if (!peers.length) throw new Error("load the other parties' public key files");
    if (!state.source) throw new Error("choose your data file");
    const o = {
      label: $("label-select").value,
      variant: $("variant-select").value,
      epsilon: num("epsilon-input", "ε"),
      delta: num("delta-input", "δ"),
      mix: num("mix-input", "l", { integer: true, min: 1 }),
      samples: num("samples-input", "T", { integer: true, min: 1 }),
    };
    if (state.schema) o.schema = state.schema;
    const pool = num("pool-input", "pool", { integer: true, optional: true });
    if (pool !== undefined) o.pool = pool;
    o.aggregatorSeeds = num("aggregator-seeds-input", "t", { integer: true });
    setStatus("running", "Making the contribution…");
    const r = await pm.federatedContribute(state.source, secretKey, peers, o);
    const c = keys.afterContribute(r.contribution, r.secretKey);
    state.contribution = r.contribution;
    state.updatedKey = r.secretKey;
    state.secretKey = r.secretKey;
    state.party = c.party;
    // This party's own warnings (its column-type decision's and its normalization's); the
    // file carries them to the aggregate receipt.
    const made = JSON.parse(r.contribution);
    const own = [...(made.column_types?.warnings ?? []), ...(made.normalization?.warnings ?? [])];
    $("summary").textContent = own.map((w) => `warning: ${w}`).join("\n");
    $("download-contribution").disabled = false;
    $("download-updated-key").disabled = false;
    setStatus("done", `Contribution of party ${state.party} ready: download it and send it to the aggregator. Save the updated private key (it records this run, so the key is never reused for it).`);
  } catch (e) {
    setStatus("error", friendly(e, "Could not contribute"));
  }
}

async function aggregate() {
  try {
    const files = [...$("contributions-input").files];
    if (!files.length) throw new Error("load the contribution files of the parties");
    setStatus("running", "Aggregating…");
    const texts = await Promise.all(files.map((f) => f.text()));
    const r = await pm.federatedAggregate(texts);
    state.result = r;
    $("download-data").disabled = false;
    $("download-receipt").disabled = false;
    const rows = r.csv.trim().split("\n").length - 1;
    const t = r.receipt.parameters?.aggregator_seeds;
    setStatus("done", `Done: ${rows} synthetic rows with ε = ${Number(r.receipt.epsilon).toFixed(4)}, δ = ${r.receipt.delta}, against an aggregator holding the seeds of t = ${t} parties.`);
    $("summary").textContent = (r.receipt.warnings ?? []).map((w) => `warning: ${w}`).join("\n");
  } catch (e) {
    setStatus("error", friendly(e, "Could not aggregate"));
  }
}

async function loadSource(f) {
  state.source = f;
  try {
    await fillLabels(pm, f, $("label-select"));
    setStatus("idle", `${f.name} loaded.`);
  } catch (err) {
    setStatus("error", friendly(err, "Could not read this file"));
  }
}

async function loadKey(input) {
  const f = input.files[0];
  try {
    const k = keys.load(await f.text(), "file");
    state.party = k.party;
    setStatus("idle", `Private key of party ${k.party} loaded.`);
  } catch (err) {
    setStatus("error", friendly(err, "Could not use this key"));
  } finally {
    // Read once: the page never goes back to the file (it would be the key before a contribution).
    input.value = "";
  }
}

$("file-input").addEventListener("change", (e) => {
  const f = e.target.files[0];
  if (f) loading.source = loadSource(f);
});
$("schema-input").addEventListener("change", (e) => {
  const f = e.target.files[0];
  state.schema = null;
  if (f) {
    loading.schema = f.text().then(
      (t) => {
        state.schema = t;
        setStatus("idle", `Schema ${f.name} loaded.`);
      },
      (err) => setStatus("error", friendly(err, "Could not read the schema")),
    );
  }
});
$("key-input").addEventListener("change", (e) => {
  if (e.target.files[0]) loading.key = loadKey(e.target);
});
$("keygen-button").addEventListener("click", keygen);
$("download-key").addEventListener("click", () => download(state.secretKey, `party-${state.party}.key.json`, "application/json"));
$("download-pub").addEventListener("click", () => download(state.publicKey, `party-${state.party}.pub.json`, "application/json"));
$("contribute-button").addEventListener("click", contribute);
$("download-contribution").addEventListener("click", () => download(state.contribution, `contribution-party-${state.party}.json`, "application/json"));
$("download-updated-key").addEventListener("click", () => download(state.updatedKey, `party-${state.party}.key.json`, "application/json"));
$("aggregate-button").addEventListener("click", aggregate);
$("download-data").addEventListener("click", () => download(state.result.csv, "federated-synthetic.csv", "text/csv"));
$("download-receipt").addEventListener("click", () => download(JSON.stringify(state.result.receipt, null, 2) + "\n", "federated-receipt.json", "application/json"));
pm.ready()
  .then(() => (document.body.dataset.ready = "1"))
  .catch((e) => setStatus("error", friendly(e, "The privmix engine did not start")));
