// SPDX-License-Identifier: Apache-2.0
// Type-checks deploy/grafana/dashboards/*.json against Grafana's dashboard
// schema as @grafana/schema publishes it (the classic JSON model, generated
// from Grafana's CUE schema): each dashboard becomes `const d: Dashboard = {...}`
// and the TypeScript compiler checks every field, its type and its enum values
// (object literals: no unknown fields either). Offline once installed.
// Usage: node check-grafana.mjs DASHBOARD.json...   (exit 1 on any error)
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), "gpulens-grafana-"));
const files = [];
for (const file of process.argv.slice(2)) {
  const json = readFileSync(file, "utf8");
  JSON.parse(json); // a syntax error names the file here
  const ts_file = path.join(dir, path.basename(file).replace(/\.json$/, ".ts"));
  writeFileSync(ts_file, `import type { Dashboard } from "@grafana/schema";\n` +
    `export const dashboard: Dashboard = ${json};\n`);
  files.push(ts_file);
}
const program = ts.createProgram(files, {
  strict: true, noEmit: true, module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
  skipLibCheck: true, typeRoots: [], baseUrl: here, paths: { "*": [path.join(here, "node_modules/*")] },
});
const diagnostics = ts.getPreEmitDiagnostics(program);
for (const d of diagnostics) {
  const where = d.file ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : "";
  console.error(`${where}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
}
console.log(`${files.length} dashboards checked against @grafana/schema's Dashboard, ${diagnostics.length} errors`);
process.exit(diagnostics.length === 0 && files.length > 0 ? 0 : 1);
