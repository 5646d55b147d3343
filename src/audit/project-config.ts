/**
 * What the project's own ESLint config says that the audit must honour, module by module: `settings.locks` (the
 * vocabularies the rules read in the editor) and `linterOptions.reportUnusedDisableDirectives` (whether an unused
 * `locks/*` disable comment is reported, and at which severity). The audit lints with its own configuration (the
 * plugin's config, its parser), so nothing else of the project's config applies.
 *
 * The config is found as ESLint finds it (`eslint.config.*` from the module's folder up) and loaded by ESLint's own
 * API. A project without one gets the plugin's defaults and no unused-directive reports. A config that cannot be
 * loaded (a plugin it imports is not installed, say) is a warning, and the audit goes on with the defaults; a config
 * named with `--eslint-config` that cannot be loaded is an error.
 */
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { ESLint } from "eslint";
import { AuditError } from "./discover.js";

export interface ModuleLintOptions {
  /** 0 off, 1 warn, 2 error. */
  readonly unused: 0 | 1 | 2;
  /** The project's `settings.locks` for this module, when it has any. */
  readonly settings?: Record<string, unknown>;
}

export interface ProjectLintConfig {
  /** A sentence for stderr when the project's config could not be read. */
  readonly warning?: string;
  optionsFor(path: string): Promise<ModuleLintOptions>;
}

const DEFAULTS: ModuleLintOptions = { unused: 0 };

function severity(value: unknown): 0 | 1 | 2 {
  if (value === 2 || value === "error") return 2;
  if (value === 1 || value === "warn" || value === true) return 1;
  return 0;
}

/**
 * `choice`: undefined to look the config up as ESLint does, false for none (`--no-eslint-config`), or a file
 * (`--eslint-config <file>`).
 */
export function projectLintConfig(root: string, choice: string | false | undefined): ProjectLintConfig {
  if (choice === false) return { optionsFor: () => Promise.resolve(DEFAULTS) };
  if (choice !== undefined && !existsSync(choice)) throw new AuditError(`--eslint-config ${choice}: no such file`);
  const eslint = new ESLint({ cwd: root, ...(choice !== undefined ? { overrideConfigFile: choice } : {}) });
  let failed: string | undefined;
  // ESLint looks a config up from a module's folder: one folder with none has none for any of its modules (the
  // lookup stats every config name in every folder up to the root, which on 20,000 modules took two seconds).
  const noConfig = new Set<string>();
  const config: ProjectLintConfig = {
    get warning() {
      return failed;
    },
    async optionsFor(path: string): Promise<ModuleLintOptions> {
      if (failed !== undefined || noConfig.has(dirname(path))) return DEFAULTS;
      let computed:
        { linterOptions?: { reportUnusedDisableDirectives?: unknown }; settings?: Record<string, unknown> } | undefined;
      try {
        computed = (await eslint.calculateConfigForFile(path)) as typeof computed;
      } catch (error) {
        const e = error as { messageTemplate?: string; message: string };
        if (e.messageTemplate === "config-file-missing") {
          noConfig.add(dirname(path));
          return DEFAULTS; // no ESLint config for this module: the plugin's defaults
        }
        const why = e.message.split("\n")[0];
        if (choice !== undefined) throw new AuditError(`cannot load the ESLint config ${choice}: ${why}`);
        failed = `could not load the project's ESLint config (${why}); auditing with the plugin's defaults: no settings.locks, and unused locks/* disable comments are not reported. Pass --no-eslint-config to skip it, or install what the config imports.`;
        return DEFAULTS;
      }
      // A module the config ignores, or matches with no `files` entry, is not linted by the project: defaults.
      if (!computed) return DEFAULTS;
      const locks = computed.settings?.["locks"];
      return {
        unused: severity(computed.linterOptions?.reportUnusedDisableDirectives),
        ...(locks !== undefined ? { settings: { locks } } : {}),
      };
    },
  };
  return config;
}
