// A static export (out/), built with Next's default bundler (Turbopack).
export default { output: "export", images: { unoptimized: true } };
