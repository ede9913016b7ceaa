/**
 * The sandbox's stand-ins in the Explorer: while sandboxed commands run, the sidecar keeps empty read-only
 * directories in the workspace as mount points for absent protected names (`.vscode`, `.envrc`, `AGENTS.md`, …),
 * and says which exist (`toolgate/sandbox/standIns`). This marks exactly those, so a person can tell them from
 * their own files. Pure: no `vscode` (standInsVscode.ts draws the marks).
 */

/** What the Explorer shows on a stand-in. */
export interface StandInMark {
  badge: string;
  tooltip: string;
}

export const STAND_IN_MARK: StandInMark = {
  badge: '◌',
  tooltip:
    "toolgate's sandbox: an empty, read-only stand-in for a protected name, there only while sandboxed commands run, " +
    'so that they cannot create it. It goes away a moment after they end, and git ignores it. To create the real ' +
    'file now, delete this empty folder first.',
};

export class StandInMarks {
  private shown = new Set<string>();

  /** The sidecar's list of every stand-in that exists now; returns the paths whose mark changed. */
  update(paths: readonly string[]): string[] {
    const next = new Set(paths);
    const changed = [...this.shown].filter((path) => !next.has(path));
    changed.push(...[...next].filter((path) => !this.shown.has(path)));
    this.shown = next;
    return changed;
  }

  /** The mark for the file system path `path`, if it is a stand-in. */
  markFor(path: string): StandInMark | undefined {
    return this.shown.has(path) ? STAND_IN_MARK : undefined;
  }
}
