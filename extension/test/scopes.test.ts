import { describe, expect, it } from 'vitest';

import { RULE_SCOPES } from '../src/protocol';
import { describeSource } from '../src/settings/rulesView';
import { FILE_SCOPE_LABELS, SCOPE_LABELS } from '../src/shared/scopes';

describe('scope labels', () => {
  it('read the same in every picker and in a rule\'s "comes from" line', () => {
    expect(RULE_SCOPES.map((scope) => SCOPE_LABELS[scope])).toEqual([
      'This session only',
      'This project, just for me (.toolgate/settings.local.json)',
      'This project, shared (.toolgate/settings.json)',
      'All my projects (user settings)',
    ]);
    expect(FILE_SCOPE_LABELS).toEqual({
      project: 'Project rules (shared with the repository)',
      local: 'Local project rules (just for you, not committed)',
      user: 'User rules (all your projects)',
    });
    const sources = RULE_SCOPES.map((scope) => describeSource({ rule: 'Bash', behavior: 'allow', source: scope, file: null, line: null, column: null, warning: null }));
    expect(sources).toEqual([
      { label: 'this session only', removable: 'session' },
      { label: 'Local project rules', removable: 'local' },
      { label: 'Project rules', removable: 'project' },
      { label: 'User rules', removable: 'user' },
    ]);
  });
});
