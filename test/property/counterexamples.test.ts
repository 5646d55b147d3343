// Minimal counterexamples the property tests found (shrunk by fast-check), kept as rule tests so each fix
// stays fixed whatever the generators draw.
import atomicClaim from "../../rules/atomic-claim.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

// `await` → `.then` with neutral names: the row a check reads arrives as a `.then` parameter, not a const. The
// check was dropped (the parameter is not named like the model), so the check-then-act claim vanished: no
// atomic-claim finding and no Q1 finding. Fixed in pairing/module.ts (objectIsModel follows `.then` parameters).
const viaThen = `export function alpha1(alpha2) {
  return prisma.job.findFirst({ where: { id: alpha2 } }).then((alpha3) => {
    if (!alpha3 || alpha3.isProcessing === true) return false;
    return prisma.job.updateMany({ where: { id: alpha2 }, data: { isProcessing: true } }).then(() => true);
  });
}`;

const checkData = { model: "job", field: "isProcessing", value: "true", checkedWhere: "in JavaScript", checkLine: "3" };

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    // the `.then` parameter holds a project, not a job: its check says nothing about job rows
    `export function start(id, projectId) {
  return prisma.project.findFirst({ where: { id: projectId } }).then((p) => {
    if (!p || p.status === "RUNNING") return false;
    return prisma.job.updateMany({ where: { id }, data: { status: "RUNNING" } });
  });
}`,
    // a `.then` on something that is not a read
    `export function start(id, load) {
  return load(id).then((alpha) => {
    if (alpha.status === "RUNNING") return false;
    return prisma.job.updateMany({ where: { id }, data: { status: "RUNNING" } });
  });
}`,
  ],
  invalid: [
    {
      code: viaThen,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 12,
          data: checkData,
          suggestions: [
            {
              messageId: "addCondition",
              data: checkData,
              output: viaThen.replace(
                "where: { id: alpha2 }, data",
                "where: { id: alpha2, isProcessing: { not: true } }, data",
              ),
            },
          ],
        },
      ],
    },
    {
      // the same with a status and the read of Knex (`first()`), in a class
      code: `export class Q {
  take(k) {
    return this.knex("jobs").where({ id: k }).first().then((r1) => {
      if (!r1 || r1.status === "running") return false;
      return this.knex("jobs").where({ id: k }).update({ status: "running" });
    });
  }
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 14,
          data: { model: "jobs", field: "status", value: "running", checkedWhere: "in JavaScript", checkLine: "4" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { model: "jobs", field: "status", value: "running", checkedWhere: "in JavaScript", checkLine: "4" },
              output: `export class Q {
  take(k) {
    return this.knex("jobs").where({ id: k }).first().then((r1) => {
      if (!r1 || r1.status === "running") return false;
      return this.knex("jobs").where({ id: k }).whereNot("status", "running").update({ status: "running" });
    });
  }
}`,
            },
          ],
        },
      ],
    },
  ],
});

// Found next to it: a row destructured from a read (`const [x] = await select…`, `const { rows: [x] } = await
// pool.query(…)`) or taken from a result (`const x = res.rows[0]`) was linked to its model only by its name.
const destructured = `export async function take(id) {
  const { rows: [next] } = await pool.query("SELECT * FROM jobs WHERE id = $1", [id]);
  if (!next || next.status === 'running') return false;
  await pool.query("UPDATE jobs SET status = 'running' WHERE id = $1", [id]);
  return true;
}`;
const fromResult = `import { eq } from "drizzle-orm";
export async function take(id) {
  const found = await db.select().from(jobs).where(eq(jobs.id, id));
  const candidate = found[0];
  if (!candidate || candidate.status === "running") return false;
  await db.update(jobs).set({ status: "running" }).where(eq(jobs.id, id));
  return true;
}`;

ruleTester.run("atomic-claim (rows destructured or taken from a result)", atomicClaim, {
  valid: [
    // the destructured row is a project: its check says nothing about job rows
    `export async function take(id, projectId) {
  const [candidate] = await prisma.project.findMany({ where: { id: projectId } });
  if (!candidate || candidate.status === "RUNNING") return false;
  await prisma.job.updateMany({ where: { id }, data: { status: "RUNNING" } });
}`,
  ],
  invalid: [
    {
      code: destructured,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: { model: "jobs", field: "status", value: "running", checkedWhere: "in JavaScript", checkLine: "3" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { model: "jobs", field: "status", value: "running", checkedWhere: "in JavaScript", checkLine: "3" },
              output: destructured.replace(
                'WHERE id = $1", [id]);\n  return',
                "WHERE status <> 'running' AND id = $1\", [id]);\n  return",
              ),
            },
          ],
        },
      ],
    },
    {
      // destructured in a `.then` parameter
      code: `export function take(id) {
  return prisma.job.findMany({ where: { id } }).then(([alpha3]) => {
    if (!alpha3 || alpha3.isProcessing === true) return false;
    return prisma.job.updateMany({ where: { id }, data: { isProcessing: true } });
  });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 12,
          data: { model: "job", field: "isProcessing", value: "true", checkedWhere: "in JavaScript", checkLine: "3" },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                model: "job",
                field: "isProcessing",
                value: "true",
                checkedWhere: "in JavaScript",
                checkLine: "3",
              },
              output: `export function take(id) {
  return prisma.job.findMany({ where: { id } }).then(([alpha3]) => {
    if (!alpha3 || alpha3.isProcessing === true) return false;
    return prisma.job.updateMany({ where: { id, isProcessing: { not: true } }, data: { isProcessing: true } });
  });
}`,
            },
          ],
        },
      ],
    },
    {
      // a call chained on the read (the Mongo driver's cursor.toArray())
      code: `export async function take(id) {
  const [alpha3] = await db.collection("jobs").find({ _id: id }).toArray();
  if (!alpha3 || alpha3.isProcessing === true) return false;
  await db.collection("jobs").updateOne({ _id: id }, { $set: { isProcessing: true } });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: { model: "jobs", field: "isProcessing", value: "true", checkedWhere: "in JavaScript", checkLine: "3" },
          // the whole fix: the driver's matchedCount read, and the check's `return false` taken again on 0
          suggestions: [
            {
              messageId: "addConditionAndExit",
              data: { field: "isProcessing", value: "true", exit: "return false", checkLine: "3" },
              output: `export async function take(id) {
  const [alpha3] = await db.collection("jobs").find({ _id: id }).toArray();
  if (!alpha3 || alpha3.isProcessing === true) return false;
  const claimed = await db.collection("jobs").updateOne({ _id: id, isProcessing: { $ne: true } }, { $set: { isProcessing: true } });
  if (claimed.matchedCount === 0) return false;
}`,
            },
          ],
        },
      ],
    },
    {
      code: fromResult,
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          column: 9,
          data: { model: "jobs", field: "status", value: "running", checkedWhere: "in JavaScript", checkLine: "5" },
          // no suggestion: `and` and `ne` are not imported from drizzle-orm here
          suggestions: [],
        },
      ],
    },
  ],
});

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [],
  invalid: [
    {
      code: viaThen,
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          column: 12,
          data: { model: "job", field: "isProcessing", value: "true" },
        },
      ],
    },
  ],
});
