/** Running a short helper process (the Python probe) with a deadline, and reporting how it ended. */

import { execFile } from 'node:child_process';

export interface RunResult {
  /** The exit code; null when the process could not start or was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why it did not run to completion: the program is missing, not executable, or took too long. */
  failure?: 'notFound' | 'notExecutable' | 'timeout' | 'other';
  failureMessage?: string;
}

export type RunProcess = (
  file: string,
  args: readonly string[],
  options: { cwd?: string; timeoutMs: number; env?: NodeJS.ProcessEnv },
) => Promise<RunResult>;

export const runProcess: RunProcess = (file, args, options) =>
  new Promise((resolve) => {
    execFile(
      file,
      [...args],
      {
        cwd: options.cwd,
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        env: options.env,
        maxBuffer: 1024 * 1024,
        windowsHide: true,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (!error) {
          resolve({ code: 0, stdout, stderr });
          return;
        }
        const errno = (error as NodeJS.ErrnoException).code;
        if (errno === 'ENOENT') {
          resolve({ code: null, stdout, stderr, failure: 'notFound', failureMessage: error.message });
        } else if (errno === 'EACCES') {
          resolve({ code: null, stdout, stderr, failure: 'notExecutable', failureMessage: error.message });
        } else if (error.killed) {
          resolve({ code: null, stdout, stderr, failure: 'timeout', failureMessage: error.message });
        } else if (typeof errno === 'number') {
          resolve({ code: errno, stdout, stderr });
        } else {
          resolve({ code: null, stdout, stderr, failure: 'other', failureMessage: error.message });
        }
      },
    );
  });
