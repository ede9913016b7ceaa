import { describe, expect, it } from 'vitest';

import type { ChatAction, ChatState } from '../src/shared/chatModel';
import { TOOL_OUTPUT_CAP, formatDuration, initialState, reduce, resultText } from '../src/shared/chatModel';

const start = (): ChatState =>
  initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default');

const run = (actions: ChatAction[], state = start()): ChatState => actions.reduce(reduce, state);

describe('chat state', () => {
  it('streams text deltas into one assistant message, finished by the next event', () => {
    const state = run([
      { type: 'userMessage', text: 'fix it' },
      { type: 'event', at: 1, event: { type: 'text_delta', text: 'Look' } },
      { type: 'event', at: 2, event: { type: 'text_delta', text: 'ing…' } },
    ]);
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'assistant']);
    expect(state.items[1]).toMatchObject({ text: 'Looking…', streaming: true });
    const after = run([{ type: 'event', at: 3, event: { type: 'tool_call_started', tool_use_id: 't1', name: 'Read', input: {}, summary: 'a.py' } }], state);
    expect(after.items[1]).toMatchObject({ streaming: false });
    const next = run([{ type: 'event', at: 4, event: { type: 'text_delta', text: 'Done.' } }], after);
    expect(next.items.map((item) => item.kind)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('follows a tool call from start through live output to its result and duration', () => {
    const state = run([
      { type: 'event', at: 1_000, event: { type: 'tool_call_started', tool_use_id: 't1', name: 'Bash', input: {}, summary: 'npm test' } },
      { type: 'toolProgress', toolUseId: 't1', text: 'PASS a\n' },
      { type: 'event', at: 1_500, event: { type: 'tool_call_progress', tool_use_id: 't1', kind: 'stdout', text: 'PASS b\n' } },
      { type: 'event', at: 3_250, event: {
          type: 'tool_call_finished',
          tool_use_id: 't1',
          name: 'Bash',
          is_error: false,
          summary: 'exit 0',
          result: { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'ok' }], is_error: false },
        }, },
    ]);
    expect(state.items[0]).toMatchObject({
      kind: 'tool',
      status: 'done',
      output: 'PASS a\nPASS b\n',
      resultSummary: 'exit 0',
      result: 'ok',
      startedAt: 1_000,
      finishedAt: 3_250,
    });
    expect(formatDuration(3_250 - 1_000)).toBe('2.3 s');
    expect(
      resultText({
        type: 'tool_result',
        tool_use_id: 't',
        content: [
          { type: 'text', text: 'a' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } },
        ],
        is_error: false,
      }),
    ).toBe('a\n[image image/png]');
  });

  it('shows a failed call\'s message without the model-facing <tool_error> markup', () => {
    const content = '<tool_error kind="state">\nsrc/a.py has not been read yet.\nRead it first.\n</tool_error>';
    const state = run([
      { type: 'event', at: 1, event: { type: 'tool_call_started', tool_use_id: 't1', name: 'Edit', input: {}, summary: 'a.py' } },
      { type: 'event', at: 2, event: {
          type: 'tool_call_finished',
          tool_use_id: 't1',
          name: 'Edit',
          is_error: true,
          summary: 'src/a.py has not been read yet.',
          result: { type: 'tool_result', tool_use_id: 't1', content, is_error: true },
        }, },
    ]);
    expect(state.items[0]).toMatchObject({ status: 'error', result: 'src/a.py has not been read yet.\nRead it first.' });
    expect(resultText({ type: 'tool_result', tool_use_id: 't', content: 'ok\n</tool_error>x', is_error: false })).toBe(
      'ok\n</tool_error>x', // only whole markup lines go
    );
  });

  it('drops the retry notices once the model answers after all, and keeps them when it never does', () => {
    const retrying = {
      type: 'retrying' as const,
      attempt: 1,
      max_attempts: 3,
      delay_seconds: 1,
      kind: 'overloaded' as const,
      message: 'overloaded',
      discard_partial: false,
    };
    const waiting = run([
      { type: 'userMessage', text: 'hi' },
      { type: 'event', at: 1, event: retrying },
      { type: 'event', at: 2, event: { ...retrying, attempt: 2 } },
    ]);
    expect(waiting.items.map((item) => item.kind)).toEqual(['user', 'notice', 'notice']);
    const answered = run([{ type: 'event', at: 3, event: { type: 'text_delta', text: 'Hello' } }], waiting);
    expect(answered.items.map((item) => item.kind)).toEqual(['user', 'assistant']);
    const called = run(
      [{ type: 'event', at: 3, event: { type: 'tool_call_started', tool_use_id: 't', name: 'Read', input: {}, summary: 'a' } }],
      waiting,
    );
    expect(called.items.map((item) => item.kind)).toEqual(['user', 'tool']);
    const failed = run([{ type: 'event', at: 3, event: { type: 'error', kind: 'overloaded', message: 'gave up' } }], waiting);
    expect(failed.items.map((item) => item.kind)).toEqual(['user', 'notice', 'notice', 'notice']);
  });

  it('is thinking from each model request until anything of its answer arrives', () => {
    const sent = run([
      { type: 'busy', busy: true },
      { type: 'userMessage', text: 'hi' },
      { type: 'event', at: 1, event: { type: 'message', message: { role: 'user', content: [{ type: 'text', text: 'hi' }] } } },
    ]);
    expect(sent.thinking).toBe(false);
    const asked = run([{ type: 'event', at: 2, event: { type: 'request_started', request: 1 } }], sent);
    expect(asked.thinking).toBe(true);
    expect(run([{ type: 'event', at: 3, event: { type: 'todo_update', todos: [] } }], asked).thinking).toBe(true);
    expect(run([{ type: 'event', at: 3, event: { type: 'text_delta', text: 'H' } }], asked).thinking).toBe(false);
    const tool = { type: 'tool_call_started' as const, tool_use_id: 't', name: 'Read', input: {}, summary: 'a' };
    expect(run([{ type: 'event', at: 3, event: tool }], asked).thinking).toBe(false);
    expect(run([{ type: 'event', at: 3, event: { type: 'error', kind: 'auth', message: 'no key' } }], asked).thinking).toBe(false);
    expect(run([{ type: 'turnAborted', reason: 'the sidecar stopped', at: 3 }], asked).thinking).toBe(false);
    expect(run([{ type: 'busy', busy: false }], asked).thinking).toBe(false);
  });

  it('keeps only the tail of a long live output, and says it did', () => {
    const big = 'x'.repeat(TOOL_OUTPUT_CAP);
    const state = run([
      { type: 'event', at: 1, event: { type: 'tool_call_started', tool_use_id: 't1', name: 'Bash', input: {}, summary: 'yes' } },
      { type: 'toolProgress', toolUseId: 't1', text: big },
      { type: 'toolProgress', toolUseId: 't1', text: 'END' },
    ]);
    const tool = state.items[0];
    expect(tool?.kind === 'tool' && tool.output.length).toBe(TOOL_OUTPUT_CAP);
    expect(tool?.kind === 'tool' && tool.output.endsWith('END')).toBe(true);
    expect(tool?.kind === 'tool' && tool.outputTrimmed).toBe(true);
  });

  it('resolves an approval card once; a late second resolution changes nothing', () => {
    const state = run([
      { type: 'approvalRequested', id: 'a1', card: { toolUseId: 't1', toolName: 'Bash', summary: 'rm x', reason: 'r', suggestions: [] } },
      { type: 'approvalResolved', id: 'a1', state: 'denied', outcome: 'Denied.' },
      { type: 'approvalResolved', id: 'a1', state: 'cancelled', outcome: 'Withdrawn' },
    ]);
    expect(state.items[0]).toMatchObject({ state: 'denied', outcome: 'Denied.' });
  });

  it('keeps a refused "always allow" rule and its reason on the pending card, and drops the reason once answered', () => {
    const refused = run([
      { type: 'approvalRequested', id: 'a1', card: { toolUseId: 't1', toolName: 'Bash', summary: 'ls', reason: 'r', suggestions: [] } },
      { type: 'approvalFailed', id: 'a1', rule: 'Bash(ls', scope: 'user', error: 'not closed' },
    ]);
    expect(refused.items[0]).toMatchObject({ state: 'pending', draft: { rule: 'Bash(ls', scope: 'user' }, error: 'not closed' });
    const answered = reduce(refused, { type: 'approvalResolved', id: 'a1', state: 'allowed', outcome: 'Allowed.' });
    expect(answered.items[0]).toMatchObject({ state: 'allowed', error: '' });
    // A refusal that arrives after the answer changes nothing.
    const late = reduce(answered, { type: 'approvalFailed', id: 'a1', rule: 'x', scope: 'session', error: 'late' });
    expect(late.items[0]).toMatchObject({ state: 'allowed', error: '' });
  });

  it('replaces the settings problems with each report', () => {
    const problem = { text: 'broken', file: '/ws/.toolgate/settings.json', line: 1, column: 2 };
    const state = run([{ type: 'settingsProblems', problems: [problem] }]);
    expect(state.settingsProblems).toEqual([problem]);
    expect(reduce(state, { type: 'settingsProblems', problems: [] }).settingsProblems).toEqual([]);
  });

  it('draws a loaded session\'s history, pairing tool calls with their results', () => {
    const before = run([{ type: 'userMessage', text: 'old' }]);
    const state = run(
      [
        {
          type: 'sessionOpened',
          sessionId: 's2',
          mode: 'plan',
          busy: false,
          todos: [{ id: '1', content: 'write tests', status: 'in_progress' }],
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'run the tests' }] },
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'Running them.' },
                { type: 'tool_use', id: 'tu1', name: 'Bash', input: { command: 'pytest -q\n--tb=short' } },
                { type: 'tool_use', id: 'tu2', name: 'Read', input: { file_path: 'a.py' } },
              ],
            },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: 'tu1', content: '3 passed\nin 0.1s', is_error: false }],
            },
          ],
        },
      ],
      before,
    );
    expect(state).toMatchObject({ sessionId: 's2', mode: 'plan', busy: false, todos: [{ content: 'write tests' }] });
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(state.items[1]).toMatchObject({ text: 'Running them.', streaming: false });
    expect(state.items[2]).toMatchObject({
      toolName: 'Bash',
      summary: 'pytest -q',
      status: 'done',
      resultSummary: '3 passed',
      result: '3 passed\nin 0.1s',
    });
    // A call whose result was never recorded (the sidecar died mid-turn) says so.
    expect(state.items[3]).toMatchObject({ toolName: 'Read', summary: 'a.py', status: 'error' });
  });

  it('reopened while its turn runs, draws the running reply\'s calls as running and older lost ones as lost', () => {
    const reply = (id: string) => ({ role: 'assistant' as const, content: [{ type: 'tool_use' as const, id, name: 'Read', input: { file_path: `${id}.py` } }] });
    const messages = [
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'look' }] },
      reply('lost'), // a crash long ago left it without a result
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'look again' }] },
      reply('now'), // the turn that is running is running it
    ];
    const opened = (busy: boolean) => run([{ type: 'sessionOpened', sessionId: 's2', mode: 'default', busy, todos: [], messages }]);
    const status = (state: ChatState) => state.items.filter((item) => item.kind === 'tool').map((item) => item.status);
    expect(status(opened(true))).toEqual(['error', 'running']);
    expect(status(opened(false))).toEqual(['error', 'error']);
    const finished = reduce(opened(true), {
      type: 'event',
      at: 5,
      event: { type: 'tool_call_finished', tool_use_id: 'now', name: 'Read', is_error: false, summary: 'Read 3 lines', result: { type: 'tool_result', tool_use_id: 'now', content: 'x', is_error: false } },
    });
    expect(status(finished)).toEqual(['error', 'done']);
  });

  it('shows an error event as an error notice and ends streaming', () => {
    const state = run([
      { type: 'event', at: 1, event: { type: 'text_delta', text: 'partial' } },
      { type: 'event', at: 2, event: { type: 'error', kind: 'auth', message: 'The API key was rejected.' } },
    ]);
    expect(state.items[0]).toMatchObject({ streaming: false });
    expect(state.items[1]).toMatchObject({ kind: 'notice', level: 'error', text: 'The API key was rejected.', action: 'setApiKey' });
    // Other failures offer no key: a refused key is the only one the key fixes.
    const overloaded = run([{ type: 'event', at: 2, event: { type: 'error', kind: 'overloaded', message: 'Busy.' } }]);
    expect(overloaded.items[0]).not.toHaveProperty('action');
  });

  it('counts the time a call waited for the person apart from its run time, once per wait', () => {
    const bash = { type: 'tool_call_started', tool_use_id: 't1', name: 'Bash', input: {}, summary: 'pytest' } as const;
    const waiting = run([
      { type: 'event', at: 1_000, event: bash },
      { type: 'approvalRequested', id: 'a1', card: { toolUseId: 't1', toolName: 'Bash', summary: 'pytest', reason: '', suggestions: [] }, at: 1_200 },
    ]);
    expect(waiting.items[0]).toMatchObject({ waitingSince: 1_200, waitedMs: 0 });
    const state = run(
      [
        { type: 'approvalResolved', id: 'a1', state: 'allowed', outcome: 'Allowed once.', at: 9_200 },
        { type: 'approvalResolved', id: 'a1', state: 'allowed', outcome: 'Allowed once.', at: 99_000 },
        { type: 'event', at: 10_000, event: { type: 'tool_call_finished', tool_use_id: 't1', name: 'Bash', is_error: false, summary: 'exit 0', result: { type: 'tool_result', tool_use_id: 't1', content: [], is_error: false } } },
      ],
      waiting,
    );
    expect(state.items[0]).toMatchObject({ waitingSince: null, waitedMs: 8_000, startedAt: 1_000, finishedAt: 10_000 });
    // A review's wait counts the same way; a call that ends while it waits (aborted) stops waiting then.
    const review = run([
      { type: 'event', at: 0, event: { ...bash, name: 'Edit' } },
      { type: 'reviewRequested', id: 'r1', toolUseId: 't1', title: 'Edit', reason: '', files: [], at: 100 },
      { type: 'turnAborted', reason: 'the sidecar stopped', at: 5_100 },
    ]);
    expect(review.items[0]).toMatchObject({ status: 'error', waitingSince: null, waitedMs: 5_000 });
  });

  it('drops the partial reply when a retry starts it over, and says why', () => {
    const state = run([
      { type: 'event', at: 1, event: { type: 'text_delta', text: 'Half a sent' } },
      {
        type: 'event',
        at: 2,
        event: {
          type: 'retrying',
          attempt: 1,
          max_attempts: 4,
          delay_seconds: 2,
          kind: 'overloaded',
          message: 'the API is overloaded',
          discard_partial: true,
        },
      },
    ]);
    expect(state.items.map((item) => item.kind)).toEqual(['notice']);
    expect(state.items[0]).toMatchObject({ level: 'warning' });
    expect(state.items[0]?.kind === 'notice' && state.items[0].text).toContain('Trying again in 2.0 s (attempt 1 of 4)');
    const answered = run([{ type: 'event', at: 3, event: { type: 'text_delta', text: 'A whole sentence.' } }], state);
    expect(answered.items.map((item) => item.kind)).toEqual(['assistant']);
    expect(answered.items[0]).toMatchObject({ text: 'A whole sentence.' });
  });

  it('says when older tool outputs were cleared to fit the context window', () => {
    const message = 'The conversation no longer fit the model\'s context window, so 2 earlier tool outputs were cleared.';
    const state = run([
      { type: 'event', at: 1, event: { type: 'text_delta', text: 'Reading.' } },
      { type: 'event', at: 2, event: { type: 'context_cleared', cleared: 2, message } },
    ]);
    expect(state.items[0]).toMatchObject({ kind: 'assistant', streaming: false });
    expect(state.items[1]).toMatchObject({ kind: 'notice', level: 'info', text: message });
  });

  it('shows a compaction with its summary, and a failed one as a warning', () => {
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const state = run([
      { type: 'event', at: 1, event: { type: 'text_delta', text: 'Reading.' } },
      {
        type: 'event',
        at: 2,
        event: {
          type: 'compacted', trigger: 'auto', summarised: 12, kept: 3, tokens_before: 9000, tokens_after: 2000,
          seconds: 1.5, summary: '## Goal and constraints\nfix the parser', reattached: [], forgotten: ['/w/a.py'],
          summary_usage: usage, kept_from_tool_use_id: null,
        },
      },
      { type: 'event', at: 3, event: { type: 'compaction_failed', trigger: 'manual', message: 'Compaction failed.' } },
      {
        type: 'event',
        at: 4,
        event: {
          type: 'usage', usage, context_tokens: 2010, context_estimated: false, context_window: 200000, cost_usd: null, total_usage: usage,
          total_cost_usd: null,
        },
      },
    ]);
    expect(state.items[0]).toMatchObject({ kind: 'assistant', streaming: false });
    expect(state.items[1]).toMatchObject({ kind: 'notice', level: 'info' });
    const text = state.items[1]?.kind === 'notice' ? state.items[1].text : '';
    expect(text).toContain('12 earlier messages summarised, 3 kept');
    // The summary is the notice's to unfold, not part of its sentence.
    expect(text).not.toContain('## Goal');
    expect(state.items[1]).toMatchObject({ summary: '## Goal and constraints\nfix the parser' });
    expect(state.items[2]).toMatchObject({ kind: 'notice', level: 'warning', text: 'Compaction failed.' });
    expect(state.items).toHaveLength(3); // the usage event is no card: it sets the header's context line
    expect(state.usage).toMatchObject({ context_tokens: 2010, context_window: 200000 });
    const reopened = run([{ type: 'sessionOpened', sessionId: 's2', mode: 'default', messages: [], todos: [], busy: false }], state);
    expect(reopened.usage).toBeNull();
  });

  it('marks the summarised turns as soon as a compaction says which call it kept first', () => {
    const usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const reply = (n: number, text: string | null): ChatAction[] => [
      ...(text === null ? [] : [{ type: 'event', at: n, event: { type: 'text_delta', text } } as const]),
      { type: 'event', at: n, event: { type: 'tool_call_started', tool_use_id: `t${n}`, name: 'Read', input: {}, summary: '' } },
    ];
    const compacted = (keptFrom: string | null): ChatAction => ({
      type: 'event',
      at: 9,
      event: {
        type: 'compacted', trigger: 'auto', summarised: 4, kept: 2, tokens_before: 900, tokens_after: 300, seconds: 1,
        summary: '## Goal and constraints', reattached: [], forgotten: [], summary_usage: usage,
        kept_from_tool_use_id: keptFrom,
      },
    });
    const read = run([{ type: 'userMessage', text: 'Read every module' }, ...reply(1, 'Reading a.'), ...reply(2, 'Reading b.')]);
    // user, 'Reading a.', t1, 'Reading b.', t2: the reply kept first is 'Reading b.' and its call.
    const first = run([compacted('t2')], read);
    expect(first.summarised).toBe(3);
    expect(first.items.map((item) => item.kind)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'notice']);
    // A reply kept first without text starts at its call's card; the notice before it was summarised too.
    const second = run([...reply(3, null), compacted('t3')], first);
    expect(second.summarised).toBe(6);
    // Nothing to go by (a kept reply that made no call, or one not on screen): what was marked stays marked.
    expect(run([compacted(null)], second).summarised).toBe(6);
    expect(run([compacted('t-elsewhere')], second).summarised).toBe(6);
  });

  it('ignores the events that only repeat what was drawn', () => {
    const before = run([{ type: 'event', at: 1, event: { type: 'text_delta', text: 'x' } }]);
    const after = run(
      [{ type: 'event', at: 3, event: { type: 'message', message: { role: 'assistant', content: [] } } }],
      before,
    );
    expect(after).toBe(before);
  });

  it('gives every generated item a distinct id', () => {
    const state = run([
      { type: 'userMessage', text: 'a' },
      { type: 'notice', level: 'info', text: 'b' },
      { type: 'userMessage', text: 'c' },
    ]);
    expect(new Set(state.items.map((item) => item.id)).size).toBe(3);
  });
  it('marks a message typed before the sidecar was ready as queued until it is sent', () => {
    const waiting = run([{ type: 'userMessage', text: 'hello', queued: true }]);
    expect(waiting.items[0]).toMatchObject({ kind: 'user', text: 'hello', queued: true });
    const sent = run([{ type: 'queueSent' }, { type: 'userMessage', text: 'next' }], waiting);
    expect(sent.items).toMatchObject([
      { kind: 'user', text: 'hello', queued: false },
      { kind: 'user', text: 'next', queued: false },
    ]);
  });

  it('ends every open card when the turn is aborted (a crashed sidecar), and leaves finished ones alone', () => {
    const state = run([
      { type: 'busy', busy: true },
      { type: 'event', at: 1, event: { type: 'tool_call_started', tool_use_id: 'done', name: 'Read', input: {}, summary: 'a.py' } },
      { type: 'event', at: 2, event: {
          type: 'tool_call_finished', tool_use_id: 'done', name: 'Read', is_error: false, summary: '3 lines',
          result: { type: 'tool_result', tool_use_id: 'done', content: 'x', is_error: false },
        }, },
      { type: 'event', at: 3, event: { type: 'tool_call_started', tool_use_id: 'run', name: 'Bash', input: {}, summary: 'make' } },
      { type: 'approvalRequested', id: 'a1', card: { toolUseId: 'run', toolName: 'Bash', summary: 'make', reason: '', suggestions: [] } },
      { type: 'reviewRequested', id: 'r1', toolUseId: 'e', title: 'Edit a.py', reason: '', files: [] },
      { type: 'event', at: 4, event: { type: 'text_delta', text: 'Runn' } },
      { type: 'turnAborted', reason: 'the sidecar stopped', at: 9 },
    ]);
    expect(state.busy).toBe(false);
    expect(state.items).toMatchObject([
      { kind: 'tool', id: 'done', status: 'done', finishedAt: 2, resultSummary: '3 lines' },
      { kind: 'tool', id: 'run', status: 'error', finishedAt: 9, resultSummary: 'Interrupted: the sidecar stopped' },
      { kind: 'approval', state: 'cancelled', outcome: 'Not answered: the sidecar stopped' },
      { kind: 'review', state: 'cancelled', outcome: 'Withdrawn: the sidecar stopped' },
      { kind: 'assistant', text: 'Runn', streaming: false },
    ]);
  });
});
