/** A progress bar on stderr, only when stderr is a terminal and the project is large enough to wait for. */
export const LARGE_PROJECT = 200;

export function progressBar(
  total: number,
  stream: NodeJS.WriteStream = process.stderr,
): { tick(done: number): void; end(): void } {
  if (!stream.isTTY || total < LARGE_PROJECT) return { tick() {}, end() {} };
  const width = 30;
  let last = -1;
  return {
    tick(done) {
      const filled = Math.round((done / total) * width);
      if (filled === last && done !== total) return;
      last = filled;
      stream.write(`\rlocks-audit [${"#".repeat(filled)}${" ".repeat(width - filled)}] ${done}/${total} modules`);
    },
    end() {
      stream.write("\r\x1b[K");
    },
  };
}
