/**
 * What a tool card shows, decided apart from drawing it: its times (how long it ran, and apart from that how long it
 * waited for the person), and its body, where every piece of text appears once. Pure.
 */

import type { Item } from './chatModel';

type ToolItem = Extract<Item, { kind: 'tool' }>;

/** Live tool output kept per card. Older output is dropped, and the card says so. */
export const TOOL_OUTPUT_CAP = 64 * 1024;

/** A tool card's live output with `text` added, only its last TOOL_OUTPUT_CAP characters kept. */
export function appendOutput<T extends { output: string; outputTrimmed: boolean }>(tool: T, text: string): T {
  const output = tool.output + text;
  if (output.length <= TOOL_OUTPUT_CAP) return { ...tool, output };
  return { ...tool, output: output.slice(output.length - TOOL_OUTPUT_CAP), outputTrimmed: true };
}

/** "1.2 s", "850 ms", "2 min 5 s": how long a tool ran, for its card. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${minutes} min ${seconds} s`;
}

export interface ToolTiming {
  /** The run time, without the time spent waiting for the person ('' when nothing is known). */
  ran: string;
  /** "waiting for you" while the person decides; "waited 8.0 s for you" after; '' when it never waited. */
  waited: string;
  /** Whether the run time still grows (the call runs and does not wait). */
  ticking: boolean;
}

export function toolTiming(tool: Pick<ToolItem, 'startedAt' | 'finishedAt' | 'waitedMs' | 'waitingSince'>, now: number): ToolTiming {
  if (!tool.startedAt) return { ran: '', waited: '', ticking: false };
  const end = tool.finishedAt ?? tool.waitingSince ?? now;
  const ran = formatDuration(end - tool.startedAt - tool.waitedMs);
  if (tool.finishedAt === null && tool.waitingSince !== null) return { ran, waited: 'waiting for you', ticking: false };
  const waited = tool.waitedMs >= 1000 ? `waited ${formatDuration(tool.waitedMs)} for you` : '';
  return { ran, waited, ticking: tool.finishedAt === null };
}

export interface ToolBody {
  /** The live output, while it is the only copy of what the command printed. */
  output: string;
  /** The result's one-line summary, unless the result itself says the same. */
  summary: string;
  result: string;
}

/**
 * Each text once: a finished call's result holds what its live output showed, so the output goes; a summary the
 * result repeats (a line of it) goes too.
 */
export function toolBody(tool: Pick<ToolItem, 'status' | 'output' | 'resultSummary' | 'result'>): ToolBody {
  const result = tool.result;
  const finished = tool.status !== 'running';
  const output = finished && result.trim() ? '' : tool.output;
  const summary = tool.resultSummary.trim();
  const repeated = summary !== '' && result.split('\n').some((line) => line.trim() === summary);
  return { output, summary: repeated ? '' : tool.resultSummary, result };
}
