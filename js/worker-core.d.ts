// privmix/worker-core.mjs: the message loop of a privmix worker, for building your own.

/** Answers PrivmixWorker's requests in `scope` (default: the worker's global `self`) with the module `loadModule` resolves to. */
export declare function serve(loadModule: () => Promise<object>, scope?: { onmessage: unknown; postMessage(message: unknown, transfer?: Transferable[]): void }): void;
/** The bytes of a wasm module inlined as gzip + base64. */
export declare function inflateBase64Gzip(text: string): Promise<Uint8Array>;
/** An Error as a structured-clone-safe record. */
export declare function errorRecord(e: unknown): { name: string; message: string; param: string | undefined };
