import { describe, expect, it } from 'vitest';
import type { UsageReport } from '../src/protocol';
import { usageLabel } from '../src/shared/usageView';

const usage = { input_tokens: 1200, output_tokens: 300, cache_creation_input_tokens: 0, cache_read_input_tokens: 48000 };

function report(cost: number | null, total: number | null): UsageReport {
  return {
    type: 'usage', usage, context_tokens: 49200, context_estimated: false, context_window: 200000, cost_usd: cost, total_usage: usage,
    total_cost_usd: total,
  };
}

describe('the header\'s context line', () => {
  it('shows the context used of the window and the session\'s cost, the request\'s details in the tooltip', () => {
    const label = usageLabel(report(0.0234, 1.5));
    expect(label.text).toBe('Context 49,200 / 200,000 (25%) · $1.50');
    expect(label.title).toContain('48000 read from the cache');
    expect(label.title).toContain('$0.0234');
  });

  it('marks an estimated context, when the API reported no usage', () => {
    const label = usageLabel({ ...report(null, null), context_estimated: true });
    expect(label.text).toBe('Context ~49,200 / 200,000 (25%) · cost unknown');
    expect(label.title).toContain('The API reported no usage: the context is estimated');
    expect(usageLabel(report(null, null)).title).not.toContain('estimated');
  });

  it('says the cost is unknown instead of showing zero', () => {
    const label = usageLabel(report(null, null));
    expect(label.text).toBe('Context 49,200 / 200,000 (25%) · cost unknown');
    expect(label.title).toContain('price of this model unknown');
  });
});
