import privmix = require("privmix");
const r = privmix.synthesizeCsv("x,label\n1,a\n", { label: "label", epsilon: 1 });
const e: number = r.receipt.epsilon;
const p: Promise<unknown> = privmix.synthesizeCsvAsync("x,label\n1,a\n", { label: "label" });
export { e, p };
