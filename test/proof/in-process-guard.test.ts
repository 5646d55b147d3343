// Scenario 5: a boolean guard in the process. One failed pull from the supplier: proof/in-process-guard/
// flagged.js leaves the guard set and refuses every later sync until the process restarts;
// proof/in-process-guard/fixed.js resets it in finally and the next sync proceeds, and so does flagged.js with
// the rule's own suggestion applied (issue 18). No servers needed.
import { beforeEach, describe, expect, it } from "vitest";
import { expectVerdict, fakeApi, session, suggestedProgram } from "./harness.js";

const FLAGGED = "in-process-guard/flagged";
const FIXED = "in-process-guard/fixed";
/** flagged.js with release-in-finally's suggestion applied: the work and its return in a try, the reset in finally. */
const SUGGESTED = suggestedProgram("in-process-guard", "release-in-finally", "moveToFinally");

describe("in-process-guard: a sync guard after one thrown error", () => {
  let env: Record<string, string>;
  let supplierCalls = 0;

  beforeEach(async () => {
    supplierCalls = 0;
    const supplier = await fakeApi((_body, _request, response) => {
      supplierCalls++;
      // The supplier's first answer is an outage; later ones succeed.
      response.statusCode = supplierCalls === 1 ? 502 : 200;
      response.setHeader("content-type", "application/json");
      response.end(
        supplierCalls === 1
          ? ""
          : JSON.stringify([
              { sku: "A-1", qty: 3 },
              { sku: "B-2", qty: 0 },
            ]),
      );
    });
    const inventory = await fakeApi((_body, _request, response) => void response.end());
    env = { SUPPLIER_API_URL: supplier, INVENTORY_API_URL: inventory };
  });

  it("the linter flags the guard reset outside finally (release-in-finally, Q1) and passes the fixed one", async () => {
    await expectVerdict(FLAGGED, "release-in-finally", "Q1");
    await expectVerdict(FIXED, "release-in-finally", "Q1");
    await expectVerdict(SUGGESTED, "release-in-finally", "Q1");
  });

  /** One long-running process: a failing sync, then three more. */
  async function syncs(program: string): Promise<{ first: string; later: unknown[] }> {
    const service = await session(program, env);
    service.call("syncInventory");
    const first = await service.error();
    const later = [];
    for (let i = 0; i < 3; i++) later.push(await service.ask("syncInventory"));
    await service.kill();
    return { first, later };
  }

  it("flagged: after one failure every later sync is refused, until the process restarts", async () => {
    await expectVerdict(FLAGGED, "release-in-finally", "Q1");
    const { first, later } = await syncs(FLAGGED);
    expect(first).toBe("supplier answered 502");
    expect(later).toEqual(Array(3).fill("refused: a sync is already running"));
    expect(supplierCalls).toBe(1);
    const restarted = await session(FLAGGED, env);
    expect(await restarted.ask("syncInventory")).toBe("synced 2 items");
  });

  it.each([
    ["fixed", FIXED],
    ["suggested", SUGGESTED],
  ])("%s: after one failure the next sync proceeds", async (_name, program) => {
    await expectVerdict(program, "release-in-finally", "Q1");
    const { first, later } = await syncs(program);
    expect(first).toBe("supplier answered 502");
    expect(later).toEqual(Array(3).fill("synced 2 items"));
    expect(supplierCalls).toBe(4);
  });
});
