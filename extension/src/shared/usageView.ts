/**
 * The chat header's context line, as words: how full the model's context window was at the last request, and
 * what the session cost so far (from the sidecar's `usage` events). Pure: no DOM, no `vscode`.
 */

import type { UsageReport } from '../protocol';

export interface UsageLabel {
  /** What the header line shows. */
  text: string;
  /** The details: this request's tokens (cache reads and writes included) and cost. */
  title: string;
}

const dollars = (value: number): string => `$${value < 1 ? value.toFixed(4) : value.toFixed(2)}`;

export function usageLabel(usage: UsageReport): UsageLabel {
  const percent = Math.round((100 * usage.context_tokens) / usage.context_window);
  const cost = usage.total_cost_usd === null ? 'cost unknown' : dollars(usage.total_cost_usd);
  // `~`: the API reported no usage, so the sidecar estimated the request's size.
  const used = `${usage.context_estimated ? '~' : ''}${usage.context_tokens.toLocaleString('en-US')}`;
  const text = `Context ${used} / ${usage.context_window.toLocaleString('en-US')} (${percent}%) · ${cost}`;
  const u = usage.usage;
  const turn = usage.cost_usd === null ? 'price of this model unknown (set it in the settings)' : dollars(usage.cost_usd);
  const title =
    `Last request: ${u.input_tokens} input, ${u.output_tokens} output, ${u.cache_read_input_tokens} read from the ` +
    `cache, ${u.cache_creation_input_tokens} written to it; ${turn}. Session total: ${cost}.` +
    (usage.context_estimated ? ' The API reported no usage: the context is estimated from the request\'s size.' : '');
  return { text, title };
}
