import { describe, expect, it } from 'vitest';

import type { ChatAction, ChatState } from '../src/shared/chatModel';
import { initialState, reduce } from '../src/shared/chatModel';

const start = (): ChatState =>
  initialState({ provider: 'anthropic', model: '', baseUrl: '', hasApiKey: true, message: '' }, 'default');

const run = (actions: ChatAction[], state = start()): ChatState => actions.reduce(reduce, state);

describe('hook reports in the chat', () => {
  it('shows a blocked prompt as a warning that names the hook and its reason', () => {
    const message = 'The UserPromptSubmit hook `./policy.sh` (project) blocked this prompt: no secrets';
    const state = run([
      { type: 'userMessage', text: 'the key is' },
      { type: 'event', at: 1, event: { type: 'hook', event: 'UserPromptSubmit', outcome: 'blocked', message } },
    ]);
    expect(state.items[1]).toMatchObject({ kind: 'notice', level: 'warning', text: message });
  });

  it('shows a Stop hook keeping the model going as information, ending the streamed answer first', () => {
    const message = 'The Stop hook `./verify.sh` (user) asked the model to continue: run the tests';
    const state = run([
      { type: 'event', at: 1, event: { type: 'text_delta', text: 'Done.' } },
      { type: 'event', at: 2, event: { type: 'hook', event: 'Stop', outcome: 'continued', message } },
    ]);
    expect(state.items[0]).toMatchObject({ kind: 'assistant', streaming: false });
    expect(state.items[1]).toMatchObject({ kind: 'notice', level: 'info', text: message });
  });
});
