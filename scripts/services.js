// Throwaway PostgreSQL and Redis servers for the proof scenarios (test/proof/): each on 127.0.0.1, a free port
// and a temporary directory, gone when stopped. Used by the proof tests' global setup, and by hand:
//
//   node scripts/services.js        starts both, prints DATABASE_URL and REDIS_URL, stops both on Ctrl-C
//
// PostgreSQL comes from `initdb` and `pg_ctl` on the PATH; Redis from `redis-server` (Debian's package
// redis-server; .ci/run installs it when missing). PostgreSQL refuses to run as root, so as root the cluster
// is owned by and run as the `postgres` user (or `nobody` when there is none). Servers left behind by a run that
// was killed before it could stop them are stopped by the next start.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** A port nobody listens on right now (the server started on it retries on the rare collision). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function which(command) {
  const found = spawnSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8" });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** The uid/gid PostgreSQL runs as: ours, or an unprivileged user's when we are root. */
function postgresUser() {
  if (process.getuid?.() !== 0) return {};
  for (const name of ["postgres", "nobody"]) {
    const id = spawnSync("id", ["-u", name], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", name], { encoding: "utf8" });
    if (id.status === 0 && gid.status === 0) return { uid: Number(id.stdout), gid: Number(gid.stdout), name };
  }
  throw new Error("running as root and found no unprivileged user (postgres or nobody) to run PostgreSQL as");
}

function run(file, args, options) {
  try {
    return execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...options });
  } catch (error) {
    const output = `${error.stdout ?? ""}${error.stderr ?? ""}`.trim();
    throw new Error(`${file} ${args.join(" ")} failed: ${output || error.message}`, { cause: error });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

function readPid(file) {
  const pid = existsSync(file) ? Number.parseInt(readFileSync(file, "utf8"), 10) : Number.NaN;
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Stops the servers of earlier runs whose starter died without stopping them (a test run killed with SIGKILL,
 * a closed terminal): each server's directory records the starter's pid and the server's.
 */
export function reapOrphans() {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith("locks-proof-")) continue;
    const dir = join(tmpdir(), name);
    const starter = readPid(join(dir, "starter.pid"));
    if (starter === undefined || alive(starter)) continue;
    for (const server of [readPid(join(dir, "data", "postmaster.pid")), readPid(join(dir, "server.pid"))]) {
      if (server !== undefined && alive(server)) {
        try {
          process.kill(server, "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A new temporary directory for one server, marked with the pid of the process that starts it. */
function serverDir(kind) {
  const dir = mkdtempSync(join(tmpdir(), `locks-proof-${kind}-`));
  writeFileSync(join(dir, "starter.pid"), `${process.pid}\n`);
  return dir;
}

/**
 * Starts a PostgreSQL cluster in a new temporary directory. Resolves to `{ url, version, stop }`, where `url` is
 * a connection string for the superuser `postgres` (trust authentication, loopback only).
 */
export async function startPostgres() {
  const initdb = which("initdb");
  const pgCtl = which("pg_ctl");
  if (!initdb || !pgCtl) throw new Error("initdb and pg_ctl (PostgreSQL) are not on the PATH");
  const user = postgresUser();
  reapOrphans();
  const dir = serverDir("pg");
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, "data");
  const as = user.uid === undefined ? {} : { uid: user.uid, gid: user.gid, cwd: dir };
  run(initdb, ["-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"], as);
  let port;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='${dir}' -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    try {
      run(pgCtl, ["-D", data, "-l", join(dir, "postgres.log"), "-o", options, "-w", "-t", "60", "start"], as);
      break;
    } catch (error) {
      if (attempt === 3) {
        const log = existsSync(join(dir, "postgres.log")) ? readFileSync(join(dir, "postgres.log"), "utf8") : "";
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`${error.message}\n${log}`, { cause: error });
      }
    }
  }
  const version = run(pgCtl, ["--version"]).trim();
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    version,
    dir,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"], as);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Sends PING over RESP until the server answers PONG. */
async function redisAnswers(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let reply = "";
    socket.setTimeout(1000, () => socket.destroy());
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk;
      if (reply.includes("\r\n")) {
        socket.end();
        resolve(reply.startsWith("+PONG"));
      }
    });
    socket.on("error", () => resolve(false));
    socket.on("close", () => resolve(false));
  });
}

/** Starts a Redis server with no persistence. Resolves to `{ url, version, stop }`. */
export async function startRedis() {
  const server = which("redis-server");
  if (!server) throw new Error("redis-server is not on the PATH (Debian: apt-get install redis-server)");
  const version = run(server, ["--version"]).trim();
  reapOrphans();
  const dir = serverDir("redis");
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(
      server,
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "no",
        "--daemonize",
        "no",
        "--loglevel",
        "warning",
      ],
      { stdio: ["ignore", "ignore", "pipe"], cwd: dir },
    );
    writeFileSync(join(dir, "server.pid"), `${child.pid}\n`);
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    let exited = false;
    child.once("exit", () => (exited = true));
    for (let i = 0; i < 100 && !exited; i++) {
      if (await redisAnswers(port)) {
        child.unref();
        child.stderr.destroy();
        return {
          url: `redis://127.0.0.1:${port}`,
          version,
          stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
            rmSync(dir, { recursive: true, force: true });
          },
        };
      }
      await sleep(50);
    }
    child.kill("SIGKILL");
    if (attempt === 3) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server did not answer on port ${port}: ${stderr.trim()}`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const pg = await startPostgres();
  const redis = await startRedis().catch((error) => {
    pg.stop();
    throw error;
  });
  console.log(`# ${pg.version}; ${redis.version}`);
  console.log(`DATABASE_URL=${pg.url}`);
  console.log(`REDIS_URL=${redis.url}`);
  const stop = () => {
    redis.stop();
    pg.stop();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  setInterval(() => {}, 1 << 30);
}
