import { describe, expect, it } from 'vitest';

import { STAND_IN_MARK, StandInMarks } from '../src/sandbox/standIns';

describe("the sandbox's stand-ins in the Explorer", () => {
  it('marks exactly the paths the sidecar lists, and reports what changed', () => {
    const marks = new StandInMarks();
    expect(marks.update(['/ws/.vscode', '/ws/.envrc'])).toEqual(['/ws/.vscode', '/ws/.envrc']);
    expect(marks.markFor('/ws/.vscode')).toBe(STAND_IN_MARK);
    expect(marks.markFor('/ws/src')).toBeUndefined();
    expect(marks.update(['/ws/.envrc', '/ws/AGENTS.md'])).toEqual(['/ws/.vscode', '/ws/AGENTS.md']);
    expect(marks.markFor('/ws/.vscode')).toBeUndefined();
    expect(marks.update([])).toEqual(['/ws/.envrc', '/ws/AGENTS.md']);
    expect(marks.update([])).toEqual([]);
  });

  it("says whose it is and how to get it out of the way", () => {
    expect(STAND_IN_MARK.badge.length).toBeLessThanOrEqual(2); // the Explorer shows at most two characters
    expect(STAND_IN_MARK.tooltip).toContain("toolgate's sandbox");
    expect(STAND_IN_MARK.tooltip).toContain('delete this empty folder');
  });
});
