import {
  chmodSync,
  cpSync,
  mkdtempSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const projects = join(repoRoot, "fixtures/projects");
export const cli = join(repoRoot, "dist/src/audit/cli.js");

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** `// expect: a, b` (the editor and the audit) and `// audit-expect: a, b` (the audit only), as `file:line locks/rule`. */
export function marked(dir: string, markers: RegExp): string[] {
  return listFiles(dir).flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .flatMap((text, i) => {
        const m = markers.exec(text);
        return m ? m[1]!.split(", ").map((rule) => `${relative(dir, file)}:${i + 1} locks/${rule}`) : [];
      }),
  );
}

/** A copy of a fixture project in a temporary folder (so tests can edit it and make it a git repository). */
export function copyProject(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `locks-audit-${name}-`));
  cpSync(join(projects, name), dir, { recursive: true });
  return dir;
}

export function git(dir: string, ...args: string[]): string {
  return execFileSync(
    "git",
    ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", ...args],
    { cwd: dir, encoding: "utf8" },
  );
}

/** Makes `dir` a git repository with everything committed; returns the commit. */
export function commitAll(dir: string, message = "base"): string {
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", message);
  return git(dir, "rev-parse", "HEAD").trim();
}

/**
 * Installs this package into `dir` as a user would have it: node_modules/eslint-plugin-locks (the repository,
 * built), eslint and @typescript-eslint/parser, and their bins (`eslint`, `locks-audit`).
 */
export function installPlugin(dir: string): void {
  const nm = join(dir, "node_modules");
  mkdirSync(join(nm, ".bin"), { recursive: true });
  mkdirSync(join(nm, "@typescript-eslint"), { recursive: true });
  symlinkSync(repoRoot, join(nm, "eslint-plugin-locks"), "dir");
  symlinkSync(join(repoRoot, "node_modules/eslint"), join(nm, "eslint"), "dir");
  symlinkSync(join(repoRoot, "node_modules/@typescript-eslint/parser"), join(nm, "@typescript-eslint/parser"), "dir");
  symlinkSync(join(repoRoot, "node_modules/eslint/bin/eslint.js"), join(nm, ".bin/eslint"));
  symlinkSync(cli, join(nm, ".bin/locks-audit"));
  chmodSync(cli, 0o755); // npm marks a package's bins executable when it installs them
  writeFileSync(join(dir, ".gitignore"), "node_modules/\n");
}
