// Leases known by their heartbeat, drawn from parts in every generated database store: a module that claims its
// rows elsewhere renews a lease (filtered by id and owner, or by id alone) and finishes the work with a write that
// clears the owner (with the lease, or alone), filtered by id alone, by id and owner, or by id and the running state,
// in a function named as the holder's or as an operator's. The oracle: the finish is reported
// (`owner-checked-release` `leaseRelease`) exactly when the heartbeat names the owner, the finish ends the hold
// (clears the lease too), picks its row by id alone, and is not an operator's; nothing else is reported.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DB_STORES, DIALECTS, type DbStore, type Pred, type Syntax, type Write } from "./generators.js";
import { lint } from "./lint.js";
import { render, type Fn, type ModuleSpec } from "./render.js";
import { check, NUM_RUNS, SEED } from "./run.js";

interface LeaseParts {
  readonly store: DbStore;
  readonly heartbeat: "owner" | "id-only";
  readonly finish: "id" | "owner" | "state";
  readonly clears: "owner-and-lease" | "owner-only";
  readonly finisher: "completeTask" | "cancelTask";
  readonly syntax: Syntax;
}

const leaseArb: fc.Arbitrary<LeaseParts> = fc.record({
  store: fc.constantFrom(...DB_STORES),
  heartbeat: fc.constantFrom<LeaseParts["heartbeat"]>("owner", "id-only"),
  finish: fc.constantFrom<LeaseParts["finish"]>("id", "owner", "state"),
  clears: fc.constantFrom<LeaseParts["clears"]>("owner-and-lease", "owner-only"),
  finisher: fc.constantFrom<LeaseParts["finisher"]>("completeTask", "cancelTask"),
  syntax: fc.record({ variant: fc.nat(3), quote: fc.constantFrom<Syntax["quote"]>('"', "'") }),
});

const V = (name: string) => ({ kind: "var" as const, name });
const L = (value: string | boolean | number) => ({ kind: "lit" as const, value });
const NOW = { kind: "now" as const };

function leaseModule(p: LeaseParts): string {
  const d = DIALECTS[p.store];
  const id = p.store === "mongo" || p.store === "mongoose" ? "_id" : "id";
  const entity = "task";
  const byId: Pred = { op: "eq", field: id, value: V("taskId") };
  const heartbeat: Write = {
    entity,
    filter: p.heartbeat === "owner" ? [byId, { op: "eq", field: "lockedBy", value: V("workerId") }] : [byId],
    set: [{ field: "heartbeatAt", value: NOW }],
  };
  const finishFilter: Pred[] =
    p.finish === "id"
      ? [byId]
      : p.finish === "owner"
        ? [byId, { op: "eq", field: "lockedBy", value: V("workerId") }]
        : [byId, { op: "eq", field: "status", value: L("RUNNING") }];
  const finish: Write = {
    entity,
    filter: finishFilter,
    set: [
      ...(p.clears === "owner-and-lease" ? [{ field: "status", value: L("DONE") }] : []),
      { field: "lockedBy", value: L(null as unknown as string) },
      ...(p.clears === "owner-and-lease" ? [{ field: "heartbeatAt", value: L(null as unknown as string) }] : []),
    ],
  };
  const fns: Fn[] = [
    {
      name: "renewLease",
      role: "heartbeat",
      params: ["taskId", "workerId"],
      steps: [{ kind: "await", expr: (c) => d.update(heartbeat, c, p.syntax, false) }],
    },
    {
      name: p.finisher,
      role: "finish",
      params: p.finish === "owner" ? ["taskId", "workerId"] : ["taskId"],
      steps: [{ kind: "await", expr: (c) => d.update(finish, c, p.syntax, false) }],
    },
  ];
  const spec: ModuleSpec = {
    head: d.head([entity]),
    clients: d.clients,
    fns,
    ...(d.transaction ? { transaction: d.transaction } : {}),
  };
  return render(spec);
}

function expected(p: LeaseParts): string[] {
  const reported =
    p.heartbeat === "owner" && p.finish === "id" && p.clears === "owner-and-lease" && p.finisher === "completeTask";
  return reported ? ["locks/owner-checked-release leaseRelease"] : [];
}

describe(`leases known by their heartbeat (seed ${SEED}, ${NUM_RUNS} runs)`, () => {
  it("a finish by id alone is reported exactly where the heartbeat shows an owned lease", () => {
    check(
      fc.property(leaseArb, (p) => {
        const code = leaseModule(p);
        const findings = lint(code);
        expect(
          findings.map((f) => `${f.rule} ${f.messageId}`),
          code,
        ).toEqual(expected(p));
        for (const f of findings) {
          expect(f.fn, code).toBe(p.finisher);
          expect(f.data["owner"]?.toLowerCase().replace(/_/g, ""), code).toBe("lockedby");
        }
      }),
    );
  });
});
