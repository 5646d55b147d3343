// The proof scenarios' line in the run's summary: how many ran against real servers, or how many were skipped
// because PostgreSQL or Redis could not start (`npm test` on a machine without them passes, and must say so where
// the counts are read, not only in a warning scrolled away above).
import type { Reporter, TestModule } from "vitest/node";

export default class ProofSummary implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let ran = 0;
    let skipped = 0;
    for (const module of modules) {
      if (module.project.name !== "proof") continue;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "skipped") skipped++;
        else if (state !== "pending") ran++;
      }
    }
    if (ran + skipped === 0) return; // the proof project was not run (`--project unit`)
    const line =
      skipped > 0
        ? `proof scenarios: ${skipped} SKIPPED (PostgreSQL or Redis could not start; see the warning above), ${ran} ran`
        : `proof scenarios: all ${ran} ran against real PostgreSQL and Redis`;
    process.stdout.write(`\n ${line}\n`);
  }
}
