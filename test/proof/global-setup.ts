// Starts a throwaway PostgreSQL and Redis for the proof scenarios and stops them when the run ends. When they
// cannot start, the scenarios are skipped with a loud message, unless LOCKS_PROOF_REQUIRED=1 (set by .ci/run),
// which makes that a failure.
import type { TestProject } from "vitest/node";
import { startPostgres, startRedis, type Service } from "../../scripts/services.js";

export default async function setup(project: TestProject): Promise<() => void> {
  const started: Service[] = [];
  try {
    const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    started.push(postgres, redis);
    console.log(`proof scenarios: ${postgres.version} at ${postgres.url}; ${redis.version.split(" sha=")[0]} at ${redis.url}`);
    project.provide("proofServices", { postgres: postgres.url, redis: redis.url });
  } catch (error) {
    for (const service of started) service.stop();
    started.length = 0;
    const reason = error instanceof Error ? error.message : String(error);
    if (process.env.LOCKS_PROOF_REQUIRED === "1") throw new Error(`the proof scenarios need PostgreSQL and Redis: ${reason}`, { cause: error });
    project.provide("proofServices", { unavailable: reason });
  }
  return () => {
    for (const service of started) service.stop();
  };
}
