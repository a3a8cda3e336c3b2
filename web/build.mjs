// Builds web/dist: the bundle (esbuild, minified, content-hashed names under assets/), the page
// that links it, and a gzip copy of each file (the binary serves it to browsers that accept
// gzip). Deterministic: the same sources give the same bytes, so CI can compare the committed
// dist with a fresh build.
import { build } from "esbuild";
import { gzipSync } from "node:zlib";
import { mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const dist = "dist";
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "assets"), { recursive: true });

const result = await build({
  entryPoints: { app: "src/main.ts" },
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  outdir: join(dist, "assets"),
  entryNames: "[name]-[hash]",
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((p) => p.replace(/\\/g, "/"));
const js = outputs.find((p) => p.endsWith(".js"));
const css = outputs.find((p) => p.endsWith(".css"));
if (!js || !css) throw new Error(`bundle incomplete: ${outputs.join(", ")}`);
const rel = (p) => "/" + p.slice(dist.length + 1);
const page = readFileSync("src/index.html", "utf8").replace("%JS%", rel(js)).replace("%CSS%", rel(css));
writeFileSync(join(dist, "index.html"), page);

let total = 0;
for (const f of ["index.html", ...readdirSync(join(dist, "assets")).map((n) => join("assets", n))]) {
  const bytes = readFileSync(join(dist, f));
  const gz = gzipSync(bytes, { level: 9 });
  writeFileSync(join(dist, f + ".gz"), gz);
  total += gz.length;
  console.log(`${f}: ${bytes.length} B, gzip ${gz.length} B`);
}
console.log(`first load, gzip: ${total} B`);
