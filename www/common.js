// Small helpers shared by the app's pages (index, GMM release, Federated).
import { PrivmixWorker } from "./vendor/worker-client.mjs";

export const $ = (id) => document.getElementById(id);

export function fullWorker() {
  return new PrivmixWorker({
    createWorker: () => new Worker(new URL("./full-worker.js", import.meta.url), { type: "module" }),
  });
}

export function setStatus(kind, text) {
  const el = $("status");
  el.dataset.state = kind;
  el.textContent = text;
}

// Messages meant for programmers (an internal error, a call made out of order) are not shown
// as they are: the page says what happened and what to do.
export function friendly(err, what) {
  const msg = String(err?.message ?? err).replace(/^privmix: (error: )?/, "");
  if (err?.name === "InternalError" || /call \w+ first|unknown operation|is not a function/.test(msg)) {
    return `${what}: something went wrong inside the page (${err?.name ?? "error"}). Choose the data again, or reload the page.`;
  }
  return `${what}: ${msg}`;
}

export function num(id, name, { integer = false, optional = false, min } = {}) {
  const raw = $(id).value.trim();
  if (raw === "" && optional) return undefined;
  const v = Number(raw);
  const example = `enter e.g. ${$(id).defaultValue || "100"}${optional ? ", or leave it empty" : ""}`;
  if (raw === "" || !Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw new Error(`${name} = “${raw}” is not ${integer ? "a whole number" : "a number"}; ${example}`);
  }
  if (min !== undefined && v < min) throw new Error(`${name} = “${raw}” must be at least ${min}; ${example}`);
  return v;
}

/** Saves `data` (a string, bytes, a Blob, or an array of them: the file's parts in order). */
export function download(data, filename, type) {
  const url = URL.createObjectURL(new Blob(Array.isArray(data) ? data : [data], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Fills a label <select> from the CSV's header (first 1 MiB) and shows it. */
export async function fillLabels(pm, source, select) {
  const head = source.slice(0, 1 << 20);
  const summary = await pm.inspectCsv(head, 2000);
  select.replaceChildren(
    ...summary.columns.map((c) => {
      const o = document.createElement("option");
      o.value = c.name;
      o.textContent = c.name;
      return o;
    }),
  );
  select.value = summary.suggestedLabel ?? summary.columns[summary.columns.length - 1].name;
  select.hidden = false;
  return summary;
}
