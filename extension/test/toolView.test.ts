import { describe, expect, it } from 'vitest';

import { formatDuration, toolBody, toolTiming } from '../src/shared/toolView';

describe('a tool card\'s times', () => {
  const call = { startedAt: 1_000, finishedAt: null, waitedMs: 0, waitingSince: null };

  it('ticks the run time while the call runs', () => {
    expect(toolTiming(call, 3_500)).toEqual({ ran: '2.5 s', waited: '', ticking: true });
  });

  it('stops the run time and says so while the person decides', () => {
    expect(toolTiming({ ...call, waitingSince: 1_300 }, 60_000)).toEqual({ ran: '300 ms', waited: 'waiting for you', ticking: false });
  });

  it('shows the run time without the wait, and the wait apart, once the call is done', () => {
    const done = { ...call, finishedAt: 12_500, waitedMs: 10_000 };
    expect(toolTiming(done, 99_000)).toEqual({ ran: '1.5 s', waited: 'waited 10.0 s for you', ticking: false });
    // A wait under a second is not worth a word.
    expect(toolTiming({ ...done, waitedMs: 400 }, 99_000).waited).toBe('');
    expect(toolTiming({ ...call, startedAt: 0 }, 5).ran).toBe('');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
  });
});

describe('a tool card\'s body', () => {
  const output = 'PASS a\nPASS b\n';

  it('shows the live output while the command runs', () => {
    expect(toolBody({ status: 'running', output, resultSummary: '', result: '' })).toEqual({ output, summary: '', result: '' });
  });

  it('shows what the command printed once when it is done: the result, not the live output again', () => {
    const body = toolBody({ status: 'done', output, resultSummary: 'PASS b', result: `${output}exit 0` });
    expect(body).toEqual({ output: '', summary: '', result: `${output}exit 0` });
  });

  it('keeps a summary the result does not say, and the live output when there is no result', () => {
    expect(toolBody({ status: 'done', output: '', resultSummary: '12 lines', result: 'line 1' }).summary).toBe('12 lines');
    const interrupted = toolBody({ status: 'error', output, resultSummary: 'Interrupted: the sidecar stopped', result: '' });
    expect(interrupted).toEqual({ output, summary: 'Interrupted: the sidecar stopped', result: '' });
  });
});
