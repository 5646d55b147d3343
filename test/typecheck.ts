// Type-checks source texts held in memory (a suggestion's output, the stubs it imports) with the project's
// TypeScript, resolving packages from the project's node_modules; returns the diagnostics, one line each.
import ts from "typescript";

export function typeCheck(
  files: Record<string, string>,
  roots: readonly string[],
  extra: ts.CompilerOptions = {},
): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    experimentalDecorators: true,
    types: [],
    ...extra,
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (f) => files[f] ?? read(f);
  host.fileExists = (f) => f in files || exists(f);
  host.directoryExists = (d) => Object.keys(files).some((f) => f.startsWith(`${d}/`)) || ts.sys.directoryExists(d);
  host.getSourceFile = ((f: string, lang: ts.ScriptTarget) => {
    const text = files[f] ?? read(f);
    return text === undefined ? undefined : ts.createSourceFile(f, text, lang);
  }) as typeof host.getSourceFile;
  const program = ts.createProgram([...roots], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
}
