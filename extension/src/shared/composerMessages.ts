/**
 * Checking the attachments a webview sends with a message. The sidecar validates them again (its models refuse
 * unknown keys); this keeps a malformed one from leaving the host at all, and bounds how many and how large.
 */

import type { Attachment } from './composer';

export const MAX_ATTACHMENTS = 50;

const KINDS: readonly Attachment['kind'][] = ['file', 'selection', 'folder', 'problems'];

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

function parseAttachment(raw: unknown): Attachment | undefined {
  if (!isObject(raw)) return undefined;
  const kind = KINDS.find((candidate) => candidate === raw.kind);
  if (!kind) return undefined;
  const path = shortText(raw.path);
  // A problems mention names its scope only (no path: the workspace); the sidecar asks the editor for the problems.
  if (kind === 'problems') return raw.path === undefined || raw.path === null ? { kind } : path ? { kind, path } : undefined;
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
