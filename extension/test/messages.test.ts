import { describe, expect, it } from 'vitest';

import { MAX_TEXT, parseViewMessage } from '../src/shared/messages';
import { contentSecurityPolicy, chatHtml } from '../src/chat/webviewHtml';

describe('messages from the webview', () => {
  it('accepts the messages the view sends', () => {
    expect(parseViewMessage({ type: 'send', text: 'hi' })).toEqual({ type: 'send', text: 'hi' });
    expect(parseViewMessage({ type: 'approval', id: 'a1', choice: { kind: 'always', rule: 'Bash(ls)', scope: 'project' } })).toEqual({
      type: 'approval',
      id: 'a1',
      choice: { kind: 'always', rule: 'Bash(ls)', scope: 'project' },
    });
    expect(parseViewMessage({ type: 'approval', id: 'a1', choice: { kind: 'acceptEdits' } })).toEqual({
      type: 'approval',
      id: 'a1',
      choice: { kind: 'acceptEdits' },
    });
    expect(parseViewMessage({ type: 'review', id: 'r1', decision: 'reject', feedback: 'no' })).toMatchObject({ decision: 'reject' });
    expect(parseViewMessage({ type: 'showReview', id: 'r1', path: null })).toEqual({ type: 'showReview', id: 'r1', path: null });
    expect(parseViewMessage({ type: 'setMode', mode: 'plan' })).toEqual({ type: 'setMode', mode: 'plan' });
    expect(parseViewMessage({ type: 'openProviderSettings' })).toEqual({ type: 'openProviderSettings' });
    expect(parseViewMessage({ type: 'openPermissionRules' })).toEqual({ type: 'openPermissionRules' });
    expect(parseViewMessage({ type: 'openSettingsProblem', index: 2 })).toEqual({ type: 'openSettingsProblem', index: 2 });
    expect(parseViewMessage({ type: 'copy', text: 'npm test\n' })).toEqual({ type: 'copy', text: 'npm test\n' });
    expect(parseViewMessage({ type: 'copy', text: 7 })).toBeUndefined();
  });

  it('drops anything malformed or unknown', () => {
    for (const raw of [
      null,
      'send',
      { type: 'send', text: '   ' },
      { type: 'send', text: 'x'.repeat(MAX_TEXT + 1) },
      { type: 'setMode', mode: 'root' },
      { type: 'approval', id: 'a1', choice: { kind: 'always', rule: 'Bash(ls)', scope: 'everywhere' } },
      { type: 'approval', id: 'a1', choice: { kind: 'always', rule: ' ', scope: 'user' } },
      { type: 'approval', id: 'a1', choice: { kind: 'deny', feedback: 42 } },
      { type: 'review', id: 'r1', decision: 'maybe' },
      { type: 'sidecarAction', action: 'rm -rf' },
      // The view names a problem by its place in the list, never a path to open.
      { type: 'openSettingsProblem', index: '/etc/passwd' },
      { type: 'openSettingsProblem', index: -1 },
      { type: 'openSettingsProblem', index: 1.5 },
      { type: 'eval', code: '1' },
    ]) {
      expect(parseViewMessage(raw)).toBeUndefined();
    }
  });
});

describe('the webview shell', () => {
  it('allows only the nonce script and local styles', () => {
    const csp = contentSecurityPolicy('https://file+.vscode-resource.vscode-cdn.net', 'abc123');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'nonce-abc123'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("connect-src 'none'");
    const html = chatHtml({ cspSource: 'vscode-resource:', nonce: 'abc123', scriptUri: 'vscode-resource:/dist/webview.js', styleUri: 'vscode-resource:/dist/webview.css' });
    expect(html).toContain('<script nonce="abc123" src="vscode-resource:/dist/webview.js"></script>');
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toMatch(/style="/);
  });
});
