/**
 * The words a name is made of, split where a reader sees them meet: at separators, where a lower-case letter or a
 * digit meets a capital (`lockedAt` → locked, At), and where an acronym meets the next word (`DBLock` → DB, Lock;
 * `HTTPServer` → HTTP, Server). One splitter for every reading of names by their words, so `DBLock` names a lock
 * wherever `dbLock` does.
 */
const CAMEL = /(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/;
const ALNUM = new RegExp(`[^A-Za-z0-9]+|${CAMEL.source}`);
const LETTERS = new RegExp(`[^A-Za-z]+|${CAMEL.source}`);

/** The non-empty words of `text`; with `lettersOnly`, digits separate words too (`lock2` → lock). */
export function nameWords(text: string, lettersOnly = false): string[] {
  return text.split(lettersOnly ? LETTERS : ALNUM).filter((w) => w.length > 0);
}
