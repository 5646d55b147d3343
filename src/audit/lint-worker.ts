/**
 * The options module ESLint's worker threads load (`ESLint.fromOptionsModule`) when the audit runs with
 * `--concurrency`: each worker builds the batch's options from the same `LintJob` (lint-options.ts), written to a
 * file whose path is this module's `job` query parameter. One URL per batch, so each batch is its own module.
 */
import { readFileSync } from "node:fs";
import { lintOptions, type LintJob } from "./lint-options.js";

const path = new URL(import.meta.url).searchParams.get("job");
if (!path) throw new Error("lint-worker.js is loaded with ?job=<file>");
const job = JSON.parse(readFileSync(path, "utf8")) as LintJob;

export default await lintOptions(job);
