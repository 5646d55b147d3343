// Runs one proof program as a worker process and reports on stdout, one JSON object per line:
//
//   node proof/worker.js <program> <export> [json-arg ...]   one call, then exit
//   node proof/worker.js <program>                            a session: one call per stdin line,
//                                                             {"call": "<export>", "args": [...]}
//
// <program> is a path under proof/ without ".js" (e.g. crash-wedge/fixed). Each call answers
// {"event":"result","value":…} or {"event":"error","message":…}. The session mode keeps one process (and its
// in-memory state) across calls, as a long-running service would.
import { createInterface } from "node:readline";
import "./failpoints.js";

const [program, name, ...args] = process.argv.slice(2);
const module = await import(new URL(`./${program}.js`, import.meta.url).href);

function say(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function call(exportName, callArgs) {
  const fn = module[exportName];
  if (typeof fn !== "function") return say({ event: "error", message: `${program} has no export ${exportName}` });
  try {
    say({ event: "result", value: (await fn(...callArgs)) ?? null });
  } catch (error) {
    say({ event: "error", message: error instanceof Error ? error.message : String(error) });
  }
}

if (name) {
  await call(name, args.map((a) => JSON.parse(a)));
  process.exit(0);
} else {
  say({ event: "ready", pid: process.pid });
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const { call: exportName, args: callArgs = [] } = JSON.parse(line);
    await call(exportName, callArgs);
  }
  process.exit(0);
}
