// The Federated page's key state, kept apart from the DOM so that it can be tested in Node.
//
// A party's correlated noise e_s comes from its pairwise seeds, which depend on its private key
// and the run's context (the digest of every agreed parameter). Two contributions with the same
// key and context share e_s, and their difference is then protected by g alone. The engine
// refuses a key whose `used_contexts` already holds the context; this holder makes sure the page
// always hands it the key that carries that record:
//   * a key is read once (made here or loaded from a file), never re-read from the file input;
//   * after a contribution the holder keeps only the updated key that contribute returned;
//   * a context this page already contributed to is refused, and so is an older copy of a key
//     (same public key) that lacks a context this page saw it contribute to.

/** Parses a private key file's text; throws a clear error when it is not one. */
function parseKey(text) {
  let k;
  try {
    k = JSON.parse(text);
  } catch {
    throw new Error("this is not a privmix private key file (not JSON); load the private key that keygen made");
  }
  if (!k || typeof k.x25519 !== "string" || typeof k.x25519_secret !== "string") {
    throw new Error("this is not a privmix private key file; load the private key (not the public one)");
  }
  return k;
}

export class KeyHolder {
  constructor() {
    /** The private key text the next contribution uses (null: none yet). */
    this.text = null;
    /** Where it came from: "keygen", "file" or "updated". */
    this.source = null;
    /** Public key → the contexts this page has seen that key contribute to. */
    this.contributed = new Map();
    /** Why the last key file could not be used (null: it could), for the contribution's message. */
    this.rejected = null;
  }

  /** Holds a key made by keygen or read from a file (read the file once, then pass its text). */
  load(text, source = "file") {
    let k;
    try {
      k = parseKey(text);
    } catch (e) {
      this.rejected = e.message;
      throw e;
    }
    const seen = this.contributed.get(k.x25519);
    if (seen) {
      const used = new Set(k.used_contexts ?? []);
      const stale = [...seen].filter((c) => !used.has(c));
      if (stale.length) {
        throw new Error(
          `this is an older copy of party ${k.party}'s key: it does not record a run it already contributed to on this page, so its correlated noise would repeat; keep using the updated key this page holds (or download it with "Download updated private key")`,
        );
      }
    }
    this.text = text;
    this.source = source;
    this.rejected = null;
    return k;
  }

  /** The key text for the next contribution; throws when there is none. */
  current() {
    if (!this.text) {
      const why = this.rejected ? `the key file you loaded cannot be used (${this.rejected}); ` : "";
      throw new Error(`${why}make a key pair above, or load your private key file`);
    }
    return this.text;
  }

  /**
   * Records a finished contribution: `contributionText` is the contribution file, `updatedKey`
   * the key text contribute returned. Afterwards only the updated key is held. Throws (and
   * keeps nothing) when the context repeats one this key already contributed to, or when the
   * returned key does not record the context.
   */
  afterContribute(contributionText, updatedKey) {
    const c = JSON.parse(contributionText);
    const k = parseKey(updatedKey);
    const before = parseKey(this.current());
    if (k.x25519 !== before.x25519) {
      throw new Error("internal: the updated key is not the key that contributed");
    }
    const seen = this.contributed.get(k.x25519) ?? new Set();
    if (seen.has(c.context) || (before.used_contexts ?? []).includes(c.context)) {
      throw new Error(
        "this key already contributed to a run with exactly these parameters; its correlated noise would repeat. Agree on a new session or make fresh keys",
      );
    }
    if (!(k.used_contexts ?? []).includes(c.context)) {
      throw new Error("internal: the updated key does not record this run; not keeping the contribution");
    }
    seen.add(c.context);
    this.contributed.set(k.x25519, seen);
    this.text = updatedKey;
    this.source = "updated";
    return c;
  }
}
