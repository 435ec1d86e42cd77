export default {
  logLevel: "warn",
  build: { target: "es2022", emptyOutDir: true },
  worker: { format: "es" },
};
