/**
 * Checking the attachments a webview sends with a message. The sidecar validates them again (its models refuse
 * unknown keys); this keeps a malformed one from leaving the host at all, and bounds how many and how large.
 */

import type { AttachedProblem } from '../protocol';
import type { Attachment } from './composer';

export const MAX_ATTACHMENTS = 50;
/** The problems one attachment may carry (the host sends at most this many; the sidecar shows fewer). */
export const MAX_SENT_PROBLEMS = 200;

const KINDS: readonly Attachment['kind'][] = ['file', 'selection', 'folder', 'problems'];
const SEVERITIES: readonly AttachedProblem['severity'][] = ['error', 'warning', 'information', 'hint'];

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function line(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : undefined;
}

function shortText(value: unknown, max = 4096): string | undefined {
  return typeof value === 'string' && value.length <= max ? value : undefined;
}

function parseProblem(raw: unknown): AttachedProblem | undefined {
  if (!isObject(raw)) return undefined;
  const path = shortText(raw.path);
  const [lineNumber, column] = [line(raw.line), line(raw.column)];
  const severity = SEVERITIES.find((candidate) => candidate === raw.severity);
  const message = shortText(raw.message, 20_000);
  const source = raw.source === undefined || raw.source === null ? null : shortText(raw.source, 200);
  if (!path || !lineNumber || !column || !severity || message === undefined || source === undefined) return undefined;
  return { path, line: lineNumber, column, severity, source, message };
}

function parseAttachment(raw: unknown): Attachment | undefined {
  if (!isObject(raw)) return undefined;
  const kind = KINDS.find((candidate) => candidate === raw.kind);
  if (!kind) return undefined;
  if (kind === 'problems') {
    const list = Array.isArray(raw.problems) ? raw.problems.slice(0, MAX_SENT_PROBLEMS).map(parseProblem) : [];
    if (list.some((problem) => problem === undefined)) return undefined;
    const total = typeof raw.problemsTotal === 'number' && Number.isInteger(raw.problemsTotal) ? raw.problemsTotal : null;
    return { kind, problems: list as AttachedProblem[], problemsTotal: total };
  }
  const path = shortText(raw.path);
  if (!path) return undefined;
  const label = shortText(raw.label, 200) ?? null;
  if (kind !== 'selection') return { kind, path, label };
  const [startLine, endLine] = [line(raw.startLine), line(raw.endLine)];
  return startLine && endLine && endLine >= startLine ? { kind, path, startLine, endLine, label } : undefined;
}

/** The attachments, if every one is well-formed and there are not too many; undefined otherwise. */
export function parseAttachments(raw: unknown): Attachment[] | undefined {
  if (!Array.isArray(raw) || raw.length > MAX_ATTACHMENTS) return undefined;
  const parsed = raw.map(parseAttachment);
  return parsed.every((attachment) => attachment !== undefined) ? (parsed as Attachment[]) : undefined;
}
