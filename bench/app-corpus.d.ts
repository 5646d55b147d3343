// Types for bench/app-corpus.js, which scripts run as plain JavaScript and the zero-crash test imports.
export function fetchAppCorpus(options?: { root?: string; log?: (line: string) => void }): {
  fetched: string[];
  present: string[];
};
