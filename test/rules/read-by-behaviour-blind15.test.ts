// Real code of the crash run before blind-15's first sight, and of blind-15 itself (issue 35), read by what it does,
// in our words:
// - a sweep that picks stuck runs by their start time and then writes each one with the claimed state in its filter:
//   a run that finishes in between no longer matches, and a live one never moves the time judged, so the earlier
//   reading still holds at the write (its Q2 finding stays, at the age test); judged by a time the holder moves, the
//   write is still racy, and the message says the state is pinned and only the age is missing;
// - a start bounded from above beside an end bounded from below (`start < $end AND end > $start`): two intervals that
//   overlap (a booking that clashes), not rows left behind by age.
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import { ruleTester } from "../rule-tester.js";

/** A repair job: runs stuck in `running` for half an hour are failed one by one, each with the state re-checked. */
const REPAIR = (ageField: string) => `const cutoff = new Date(Date.now() - 30 * 60_000);
export async function repairStaleRuns() {
  const stale = await prisma.exportRun.findMany({
    where: { status: "running", ${ageField}: { lt: cutoff } },
  });
  for (const run of stale) {
    await prisma.exportRun.updateMany({
      where: { id: run.id, status: "running" },
      data: { status: "failed", finishedAt: new Date() },
    });
  }
}
`;

/** A room's clash check: bookings still busy whose time overlaps the one asked for. */
const CLASH = `import { and, eq, gt, inArray, lt, ne } from "drizzle-orm";
const BUSY = ["booked", "checked_in", "in_progress"] as const;
export async function findClash(args: { roomId: string; startTime: Date; endTime: Date; skipId?: string }) {
  const [clash] = await db
    .select({ id: bookings.id })
    .from(bookings)
    .where(
      and(
        eq(bookings.roomId, args.roomId),
        inArray(bookings.status, BUSY),
        lt(bookings.startTime, args.endTime),
        gt(bookings.endTime, args.startTime),
        args.skipId ? ne(bookings.id, args.skipId) : undefined,
      ),
    )
    .limit(1);
  return clash ?? null;
}
`;

ruleTester.run("conditional-recovery (a sweep that re-checks the state)", conditionalRecovery, {
  valid: [{ name: "judged by the start time, the state re-checked at the write", code: REPAIR("startedAt") }],
  invalid: [
    {
      name: "judged by a time the holder moves: the age is missing, and the message says the state is pinned",
      code: REPAIR("heartbeatAt"),
      errors: [
        {
          messageId: "sweepCheckInJsPinned",
          line: 7,
          data: {
            model: "exportRun",
            field: "status",
            value: "running",
            checkedWhere: "with a separate read",
            checkLine: "3",
            rowFilter: "id",
          },
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness (intervals that overlap)", progressBasedStaleness, {
  valid: [{ name: "a booking clash is two intervals, not an age", code: CLASH }],
  invalid: [
    {
      name: "the repair job's start-time test is still Q2's",
      code: REPAIR("startedAt"),
      errors: [
        {
          messageId: "startTimeScan",
          line: 4,
          data: {
            model: "exportRun",
            field: "status",
            value: "running",
            timeField: "startedAt",
            progressFields: "updatedAt, modifiedAt, heartbeatAt",
          },
        },
      ],
    },
  ],
});
