#!/usr/bin/env node
/**
 * npx locks-audit [--project tsconfig.json] [paths…] [--format text|json|sarif|markdown] [--diff <git-ref>] [--output file]
 * Exit status: 0 no unanswered finding (or no more than --max-findings), 1 findings remain, 2 usage or configuration
 * error (an unknown option, a missing tsconfig, an unreadable file, a bad ref, invalid settings.locks).
 */
import { realpathSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import plugin from "../index.js";
import { AuditError, FORMATS, runAudit, type Format } from "./index.js";

export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("locks-audit")
    .description(
      "Audit every lock in a project: where it is taken, and where Q1, Q2 and Q3 are answered, across modules.",
    )
    .version(plugin.meta.version)
    .argument(
      "[paths...]",
      "report only on these files or folders (the whole project is still read to pair across modules)",
    )
    .option(
      "-p, --project <tsconfig>",
      "the tsconfig.json to read (default: ./tsconfig.json or ./jsconfig.json if present, else every source file under the current folder)",
    )
    .addOption(new Option("-f, --format <format>", "output format").choices(FORMATS as string[]).default("text"))
    .option("--diff <git-ref>", "only locks whose acquire or missing half touches lines changed since the ref")
    .option("-o, --output <file>", "write the report to a file instead of stdout")
    .option(
      "--types",
      "build a TypeScript program so receivers' types sharpen what syntax cannot tell (a repository typed through an alias, a delegate held by a wrapper); costs about a tsc",
    )
    .option("--parse-all", "parse every module, also those with no call any recognizer handles (slower; same results)")
    .option(
      "--cache",
      "keep each module's lint between runs: a re-run lints only the modules whose text or inputs changed",
    )
    .option(
      "--cache-location <path>",
      "the cache file, or a folder for .locks-audit-cache (default: ./.locks-audit-cache)",
    )
    .option(
      "--fix",
      "write a locks-recovered-by directive at each claim recovered in another module, and point or remove false ones; then report on the fixed files",
    )
    .option(
      "--concurrency <n>",
      "lint in ESLint's worker threads: off, auto (ESLint's choice: up to half the cores, none on two) or a number of threads (default: off)",
      concurrency,
    )
    .addOption(
      new Option("--config <name>", "the plugin config whose rules report")
        .choices(["recommended", "strict"])
        .default("recommended"),
    )
    .option(
      "--eslint-config <file>",
      "the project's ESLint config to read settings.locks and reportUnusedDisableDirectives from (default: looked up as ESLint does)",
    )
    .option(
      "--no-eslint-config",
      "read no ESLint config of the project: the plugin's default vocabularies, unused disable comments not reported",
    )
    .option("--max-findings <n>", "exit 1 only when more than n findings remain (default 0)", count("--max-findings"))
    .option(
      "--max-warnings <n>",
      "exit 1 when more than n warnings remain (default: warnings never fail, as in ESLint)",
      count("--max-warnings"),
    )
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv as string[], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    throw error;
  }
  const opts = program.opts<{
    project?: string;
    format: Format;
    diff?: string;
    output?: string;
    config: "recommended" | "strict";
    parseAll?: boolean;
    types?: boolean;
    eslintConfig?: string | boolean;
    maxFindings?: number;
    maxWarnings?: number;
    cache?: boolean;
    cacheLocation?: string;
    concurrency?: "off" | "auto" | number;
    fix?: boolean;
  }>();
  try {
    const { output, exitCode, warnings, fixed } = await runAudit({
      paths: program.args,
      format: opts.format,
      config: opts.config,
      ...(opts.parseAll ? { parseAll: true } : {}),
      ...(opts.types ? { types: true } : {}),
      ...(opts.cache ? { cache: true } : {}),
      ...(opts.cacheLocation !== undefined ? { cacheLocation: opts.cacheLocation } : {}),
      ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
      ...(opts.fix ? { fix: true } : {}),
      ...(opts.project !== undefined ? { project: opts.project } : {}),
      ...(opts.diff !== undefined ? { diff: opts.diff } : {}),
      ...(typeof opts.eslintConfig === "string"
        ? { eslintConfig: opts.eslintConfig }
        : opts.eslintConfig === false
          ? { eslintConfig: false }
          : {}),
      ...(opts.maxFindings !== undefined ? { maxFindings: opts.maxFindings } : {}),
      ...(opts.maxWarnings !== undefined ? { maxWarnings: opts.maxWarnings } : {}),
    });
    for (const w of warnings) process.stderr.write(`locks-audit: warning: ${w}\n`);
    if (fixed) {
      const what = [
        `${fixed.added} directive${fixed.added === 1 ? "" : "s"} written`,
        ...(fixed.pointed ? [`${fixed.pointed} pointed at the recovering module`] : []),
        ...(fixed.removed ? [`${fixed.removed} false one${fixed.removed === 1 ? "" : "s"} removed`] : []),
      ];
      process.stderr.write(
        `locks-audit: --fix: ${what.join(", ")}${fixed.files.length > 0 ? ` in ${fixed.files.join(", ")}` : ""}\n`,
      );
    }
    if (opts.output) {
      try {
        writeFileSync(opts.output, output);
      } catch (error) {
        throw new AuditError(
          `cannot write ${opts.output}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
    } else process.stdout.write(output);
    return exitCode;
  } catch (error) {
    if (error instanceof AuditError) {
      process.stderr.write(`locks-audit: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

/** A commander parser for a non-negative whole number. */
function count(flag: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value))
      throw new InvalidArgumentError(`${flag} takes a whole number (0 or more), not ${JSON.stringify(value)}.`);
    return Number(value);
  };
}

/** A commander parser for `--concurrency`: what ESLint's CLI takes (off, auto, or a positive whole number). */
function concurrency(value: string): "off" | "auto" | number {
  if (value === "off" || value === "auto") return value;
  if (/^[1-9]\d*$/.test(value)) return Number(value);
  throw new InvalidArgumentError(
    `--concurrency takes off, auto or a number of threads (1 or more), not ${JSON.stringify(value)}.`,
  );
}

function invokedDirectly(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`locks-audit: internal error: ${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 2;
    },
  );
}
