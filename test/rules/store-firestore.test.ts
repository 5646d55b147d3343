// Firestore through the database rules (issue 35, item 1): a document written through the reference the module made
// (`db.collection("matches").doc(id)`, the modular `doc(db, "users", id)`), directly or through a transaction given
// it. A check of a document read in `runTransaction` and the write after it are one step; outside one they are two.
// Lookalikes that stay quiet: a plain edit of a document, a write through a reference the module did not make (its
// collection is unknown), and a `Map`'s `get`/`set`.
import atomicClaim from "../../rules/atomic-claim.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A ranking recalculation guarded by a flag on the match, taken in a transaction (line 9) and cleared after. */
const TRANSACTION_FLAG = `import { getFirestore } from "firebase-admin/firestore";
const db = getFirestore();
export async function onParticipation(matchId: string) {
  const matchRef = db.collection("matches").doc(matchId);
  let mine = false;
  await db.runTransaction(async (tx) => {
    const match = (await tx.get(matchRef)).data();
    if (!match || match.locked) return;
    tx.update(matchRef, { locked: true });
    mine = true;
  });
  if (!mine) return;
  try {
    await recalculateRanking(matchId);
  } finally {
    await matchRef.update({ locked: false });
  }
}
`;

/** A user's import: the status read with `getDoc`, then set with `updateDoc` (line 6), outside any transaction. */
const MODULAR_CHECK_THEN_SET = `import { doc, getDoc, updateDoc, serverTimestamp } from "firebase/firestore";
export async function startImport(db: Firestore, userId: string) {
  const ref = doc(db, "users", userId);
  const user = (await getDoc(ref)).data();
  if (user?.importStatus === "importing") return false;
  await updateDoc(ref, { importStatus: "importing", importStartedAt: serverTimestamp() });
  await importEverything(userId);
  await updateDoc(ref, { importStatus: "done" });
  return true;
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      name: "a document edited by id, nothing held",
      code: `import { getFirestore, FieldValue } from "firebase-admin/firestore";
const db = getFirestore();
export async function rename(matchId: string, name: string) {
  await db.collection("matches").doc(matchId).update({ name, updatedAt: FieldValue.serverTimestamp() });
}`,
    },
    {
      // the collection is not known here: a reference handed in is no document the module can name
      name: "a status set through a reference the module did not make",
      code: `export async function start(snap: DocumentSnapshot) {
  if (snap.data()?.status === "syncing") return;
  await snap.ref.update({ status: "syncing" });
  await pull(snap.id);
  await snap.ref.update({ status: "idle" });
}`,
    },
    {
      name: "a Map's get and set are no documents",
      code: `const seen = new Map<string, string>();
export async function remember(id: string, status: string) {
  if (seen.get(id) === "syncing") return;
  seen.set(id, "syncing");
}`,
    },
  ],
  invalid: [
    {
      name: "a flag taken in a transaction that nothing frees when the function dies",
      code: TRANSACTION_FLAG,
      errors: [{ messageId: "missingRecovery", line: 9, data: { model: "matches", field: "locked", value: "true" } }],
    },
    {
      name: "the modular API: a status claimed by updateDoc with no way back",
      code: MODULAR_CHECK_THEN_SET,
      errors: [
        { messageId: "missingRecovery", line: 6, data: { model: "users", field: "importStatus", value: "importing" } },
      ],
    },
  ],
});

/**
 * A singleton scheduler's seat kept in one document named by a constant (blind-10's first sight): read with `get()`,
 * taken when missing (line 9) or when its beat is old (line 19), and renewed by its own holder (line 14), all by the
 * document's name alone, outside any transaction.
 */
const SCHEDULER_SEAT = `import { getFirestore, FieldValue } from "firebase-admin/firestore";
const db = getFirestore();
const ME = crypto.randomUUID();
export async function holdSchedulerSeat(): Promise<boolean> {
  const seat = db.collection("runtime").doc("schedulerLock");
  const found = await seat.get();
  const stamp = Date.now();
  if (!found.exists) {
    await seat.set({ owner: ME, beatAt: FieldValue.serverTimestamp() });
    return true;
  }
  const holder = found.data()?.owner;
  if (holder === ME) {
    await seat.update({ beatAt: FieldValue.serverTimestamp() });
    return true;
  }
  const beat = found.data()?.beatAt.toMillis();
  if (stamp - beat > 30_000) {
    await seat.set({ owner: ME, beatAt: FieldValue.serverTimestamp() });
    return true;
  }
  return false;
}
`;

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    { name: "read and written in runTransaction: one step", code: TRANSACTION_FLAG },
    {
      name: "the same seat taken and renewed inside runTransaction: one step",
      code: `import { getFirestore, FieldValue } from "firebase-admin/firestore";
const db = getFirestore();
export async function holdSeat(me: string) {
  const seat = db.collection("runtime").doc("schedulerLock");
  return db.runTransaction(async (tx) => {
    const found = await tx.get(seat);
    if (!found.exists) {
      tx.set(seat, { owner: me, beatAt: FieldValue.serverTimestamp() });
      return true;
    }
    if (found.data()?.owner === me) {
      tx.update(seat, { beatAt: FieldValue.serverTimestamp() });
      return true;
    }
    return false;
  });
}`,
    },
    {
      // a constant document that names no lock is a settings row: reading it and writing it back is an edit
      name: "a settings document read, then written back by its constant name",
      code: `import { getFirestore } from "firebase-admin/firestore";
const db = getFirestore();
export async function bumpTheme(theme: string) {
  const ref = db.collection("config").doc("appearance");
  const current = await ref.get();
  if (current.data()?.theme === theme) return;
  await ref.set({ theme, changedAt: Date.now() });
}`,
    },
  ],
  invalid: [
    {
      name: "a seat document taken by get() then set(), renewed by its holder, taken over by age",
      code: SCHEDULER_SEAT,
      errors: [
        {
          messageId: "checkThenTake",
          line: 9,
          data: { model: "runtime", value: "schedulerLock", checkLine: "6" },
        },
        {
          messageId: "checkThenRenew",
          line: 14,
          data: { model: "runtime", value: "schedulerLock", checkLine: "6", testLine: "13" },
        },
        {
          messageId: "checkThenTake",
          line: 19,
          data: { model: "runtime", value: "schedulerLock", checkLine: "6" },
        },
      ],
    },
    {
      name: "getDoc, a check in JavaScript, then updateDoc: two callers both start",
      code: MODULAR_CHECK_THEN_SET,
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          data: {
            model: "users",
            field: "importStatus",
            value: "importing",
            claimLine: "6",
            checkedWhere: "in JavaScript",
            checkLine: "5",
          },
        },
      ],
    },
  ],
});
