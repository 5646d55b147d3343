// Fault injection for the proof scenarios, loaded by worker.js before the program: with PROOF_STOP_BEFORE set,
// the worker stops itself with a real SIGSTOP just before the first matching command, so the test can kill it
// (SIGKILL: a crash at exactly that point) or resume it later (SIGCONT: a pause of any length). The programs'
// own code is untouched.
//
//   PROOF_STOP_BEFORE=redis:<command>      before the first Redis command of that name (ioredis), e.g. redis:expire
//   PROOF_STOP_BEFORE=sql:<text>           before the first SQL statement containing <text> (node-postgres)
import pg from "pg";
import { Redis } from "ioredis";

const spec = process.env.PROOF_STOP_BEFORE ?? "";
const [store, ...rest] = spec.split(":");
const needle = rest.join(":");
let fired = false;

function stopHere() {
  fired = true;
  // Pipes are written synchronously on Linux, so the test sees this line before the process stops.
  process.stdout.write(`${JSON.stringify({ event: "stopped", before: spec, pid: process.pid })}\n`);
  process.kill(process.pid, "SIGSTOP");
}

if (store === "redis" && needle) {
  const sendCommand = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (command, stream) {
    if (!fired && command.name.toLowerCase() === needle.toLowerCase()) stopHere();
    return sendCommand.call(this, command, stream);
  };
} else if (store === "sql" && needle) {
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, ...args) {
    const text = typeof config === "string" ? config : config?.text;
    if (!fired && typeof text === "string" && text.includes(needle)) stopHere();
    return query.call(this, config, ...args);
  };
} else if (spec) {
  throw new Error(`PROOF_STOP_BEFORE: expected redis:<command> or sql:<text>, got "${spec}"`);
}
